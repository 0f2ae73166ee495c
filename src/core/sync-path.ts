/** @module Flushing a file or a folder to disk (backups, restores): written is not yet durable. */
import { closeSync, constants, fsyncSync, openSync } from 'node:fs';

/** Flushes a file (or folder) to disk: a backup is only a backup once it survives a power cut. */
export function syncPath(path: string): void {
  const fd = openSync(path, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
