// Sizes for people and flags, in binary units: what `--room-quota 256M` and `--store-limit 64M`
// mean ("MB" too: a flag is read as `ls -h` and tmpfs read it), and how a limit is named in a
// finding ("256 MiB").

const MiB = 1024 ** 2;

/** "256 MiB", "1.5 GiB", "512 KiB", "100 bytes". */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', MiB],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** "256M", "1G", "64MiB", "1048576" → bytes (binary units); undefined when not a size. */
export function parseBytes(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  if (!match) return undefined;
  const power = ' kmgt'.indexOf(match[2]!.toLowerCase() || ' ');
  const bytes = Math.round(Number(match[1]) * 1024 ** power);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
