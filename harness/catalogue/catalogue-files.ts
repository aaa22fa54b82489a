// The catalogue's files: `scenarios/<lab>/<name>.yaml`, one folder per lab, found without
// reading any of them (so `chaoslab list` can decide what it must load before loading anything).

import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export interface CatalogueEntry {
  name: string;
  /** The lab folder it sits in. */
  lab: string;
  file: string;
}

/** Every `*.yaml` under `<root>/<lab>/`, sorted by name. */
export function catalogue(root: string): CatalogueEntry[] {
  if (!existsSync(root)) return [];
  const out: CatalogueEntry[] = [];
  for (const lab of readdirSync(root).sort()) {
    const dir = path.join(root, lab);
    if (!isDir(dir)) continue;
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) out.push({ name: f.slice(0, -'.yaml'.length), lab, file: path.join(dir, f) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
