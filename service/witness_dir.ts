/**
 * @module
 * The shared witness directory (--witness-dir, database mode): witnesses larger than a row may
 * hold (--db-witness-max-bytes) are files here, one per job, named by the job id; the job's row
 * names the file. The API writes a file whole before the row that points to it commits (temporary
 * name, fsync, rename, fsync of the directory), so a worker on any host that mounts the directory
 * reads either nothing or all of it. A file holds the job's raw witness values (the key's n_vars x
 * 32 bytes, as checked at submission, no header); a reader refuses a file of any other size before
 * reading it. The API removes a file once its job is final (store_pg.ts, within a maintenance
 * round); `sweep` removes those a killed process left.
 */
import { constants } from "node:fs";
import { access, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";

const SUFFIX = ".witness";
const TEMP_SUFFIX = ".witness.tmp";
const JOB_ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.witness(\.tmp)?$/;
/** A file whose job is not (or no longer) active is left this long: its submission may still be committing. */
export const SWEEP_GRACE_MS = 60_000;

/** Why a job's witness file cannot be used (the job then fails with WITNESS_UNAVAILABLE). */
export class WitnessFileError extends Error {
  readonly code = "WITNESS_UNAVAILABLE";
}

/** The directory, as one process sees it (hosts may mount it under different paths). */
export class WitnessDir {
  /** The directory's path on this host. */
  readonly root: string;

  // No parameter properties: tests import this file under Node's type stripping.
  private constructor(root: string) {
    this.root = root;
  }

  /** Checks that `root` is a directory this process may read and write (creating it if missing). */
  static async open(root: string): Promise<WitnessDir> {
    await mkdir(root, { recursive: true });
    if (!(await stat(root)).isDirectory()) throw new Error(`${root} is not a directory`);
    await access(root, constants.R_OK | constants.W_OK | constants.X_OK);
    return new WitnessDir(root);
  }

  /** The file name of a job's witness (what the row stores: relative, so each host joins its own mount point). */
  static fileName(jobId: string): string {
    return jobId + SUFFIX;
  }

  /** Writes `bytes` as job `jobId`'s witness, all or nothing; returns the file name. */
  async write(jobId: string, bytes: Uint8Array): Promise<string> {
    const name = WitnessDir.fileName(jobId);
    const temp = join(this.root, jobId + TEMP_SUFFIX);
    const file = await open(temp, "wx", 0o600);
    try {
      for (let at = 0; at < bytes.byteLength;) at += (await file.write(bytes, at, bytes.byteLength - at, at)).bytesWritten;
      await file.sync();
    } catch (error) {
      await file.close().catch(() => {});
      await unlink(temp).catch(() => {});
      throw error;
    }
    await file.close();
    await rename(temp, join(this.root, name));
    const dir = await open(this.root, "r"); // the rename itself survives a crash of the host
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    return name;
  }

  /** Reads a job's witness file, which must hold exactly `expectedBytes` (the key's n_vars x 32). */
  async read(name: string, expectedBytes: number): Promise<Uint8Array> {
    if (!JOB_ID.test(name) || name.endsWith(TEMP_SUFFIX)) throw new WitnessFileError(`witness file name ${JSON.stringify(name)} is not a job's`);
    const path = join(this.root, name);
    let file;
    try {
      file = await open(path, "r");
    } catch (error) {
      throw new WitnessFileError(`cannot open the witness file ${name} in --witness-dir ${this.root}: ${(error as Error).message}`);
    }
    try {
      const { size, isFile } = await file.stat().then((s) => ({ size: s.size, isFile: s.isFile() }));
      if (!isFile || size !== expectedBytes) {
        throw new WitnessFileError(`the witness file ${name} has ${size} bytes; the key's witness has ${expectedBytes} (n_vars x 32)`);
      }
      const bytes = new Uint8Array(size);
      for (let at = 0; at < size;) {
        const { bytesRead } = await file.read(bytes, at, size - at, at);
        if (bytesRead === 0) throw new WitnessFileError(`the witness file ${name} ended after ${at} of ${size} bytes`);
        at += bytesRead;
      }
      return bytes;
    } finally {
      await file.close();
    }
  }

  /** Removes a job's witness file (gone already is fine). */
  async remove(name: string): Promise<void> {
    if (!JOB_ID.test(name)) return;
    await unlink(join(this.root, name)).catch((error) => {
      if ((error as { code?: string }).code !== "ENOENT") throw error;
    });
  }

  /**
   * Removes the files (and temporary files) of jobs that are not active, older than the grace:
   * what a process killed between a job's end and the file's removal, or between writing a file
   * and committing its row, left behind. `active` says which of the job ids are queued or running.
   */
  async sweep(active: (jobIds: string[]) => Promise<Set<string>>): Promise<number> {
    const entries = (await readdir(this.root)).flatMap((name) => {
      const match = JOB_ID.exec(name);
      return match ? [{ name, id: match[1] }] : [];
    });
    if (entries.length === 0) return 0;
    const live = await active([...new Set(entries.map((e) => e.id))]);
    let removed = 0;
    for (const { name, id } of entries) {
      if (live.has(id)) continue;
      const info = await stat(join(this.root, name)).catch(() => undefined);
      if (!info || Date.now() - info.mtimeMs < SWEEP_GRACE_MS) continue;
      await this.remove(name);
      removed++;
    }
    return removed;
  }
}
