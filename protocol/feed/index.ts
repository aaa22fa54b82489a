// The feed-lab wire codec in one import: cursors, amounts, frames, framing, encoders.

export * from './amount.js';
export * from './cursor.js';
export * from './encode.js';
export * from './frames.js';
export * from './lines.js';
