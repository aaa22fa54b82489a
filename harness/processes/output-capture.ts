// A supervised process's stdout and stderr, read into bounded head-and-tail buffers (a flood never
// grows memory), with an optional live tap that gets whole UTF-8 characters.

import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { HeadTailBuffer } from '../sandbox/output.js';

export type StreamName = 'stdout' | 'stderr';
export type OutputTap = (stream: StreamName, chunk: string) => void;

export interface OutputTail {
  stdout: string;
  stderr: string;
  /** Total bytes ever written to each stream (not just the kept tail). */
  stdoutBytes: number;
  stderrBytes: number;
}

export class OutputCapture {
  private readonly tails: Record<StreamName, HeadTailBuffer>;
  private readonly streams: Readable[] = [];
  /** Resolves when every captured stream has closed. */
  readonly closed: Promise<void>;

  constructor(
    private readonly name: string,
    streams: Record<StreamName, Readable | null>,
    limitBytes: number,
    tap?: OutputTap,
  ) {
    // A quarter for the head (the start-up error), the rest for the tail (how it ended).
    const head = Math.floor(limitBytes / 4);
    this.tails = { stdout: new HeadTailBuffer(head, limitBytes - head), stderr: new HeadTailBuffer(head, limitBytes - head) };
    const closes: Promise<void>[] = [];
    for (const streamName of ['stdout', 'stderr'] as const) {
      const stream = streams[streamName];
      if (!stream) continue;
      this.streams.push(stream);
      this.read(streamName, stream, tap);
      stream.on('error', () => {}); // closed under us (destroy(), when a stray holds the pipe)
      closes.push(new Promise<void>((resolve) => stream.once('close', () => resolve())));
    }
    this.closed = Promise.all(closes).then(() => {});
  }

  private read(streamName: StreamName, stream: Readable, tap: OutputTap | undefined): void {
    const tail = this.tails[streamName];
    const decoder = tap ? new StringDecoder('utf8') : undefined;
    let tapFailed = false;
    stream.on('data', (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      tail.push(bytes);
      if (!decoder || !tap || tapFailed) return;
      const text = decoder.write(bytes);
      if (!text) return;
      try {
        tap(streamName, text);
      } catch (error) {
        tapFailed = true;
        process.stderr.write(`chaoslab: ${this.name}: output tap failed, detached: ${String(error)}\n`);
      }
    });
    stream.on('end', () => {
      const rest = decoder?.end();
      if (!rest || !tap || tapFailed) return;
      try {
        tap(streamName, rest);
      } catch {}
    });
  }

  /** Stops reading: the pipes are held open by something that could not be found. */
  destroy(): void {
    for (const stream of this.streams) stream.destroy();
  }

  tail(): OutputTail {
    const { stdout, stderr } = this.tails;
    return { stdout: stdout.text(), stderr: stderr.text(), stdoutBytes: stdout.total, stderrBytes: stderr.total };
  }
}
