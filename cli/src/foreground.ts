/**
 * Whether the CLI may read keys from its terminal: stdin is a terminal, and this process is in the
 * terminal's foreground process group. A job in the background of an interactive shell
 * (`mcp-task call … > out &`) that sets the terminal's mode (raw mode, to read Ctrl-C as a key) is
 * stopped by SIGTTOU, and one that reads it by SIGTTIN: such a job leaves the terminal alone, asks
 * no questions and takes Ctrl-C as the SIGINT it is sent.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A process's group and the foreground group of its controlling terminal (-1 or 0 when it has none). */
export interface Groups {
  readonly pgrp: number;
  readonly tpgid: number;
}

/** The groups in a Linux `/proc/<pid>/stat` line (fields 5 and 8), or `undefined` when it does not parse. */
export function groupsOfStat(stat: string): Groups | undefined {
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself: the
  // fields are counted from the last `)`. What follows starts with the state (field 3).
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  return groupsOf(fields[2], fields[5]);
}

function groupsOf(pgrp: string | undefined, tpgid: string | undefined): Groups | undefined {
  const groups = { pgrp: Number(pgrp), tpgid: Number(tpgid) };
  return pgrp !== undefined && tpgid !== undefined && Number.isInteger(groups.pgrp) && Number.isInteger(groups.tpgid)
    ? groups
    : undefined;
}

/** True when `groups` says the process is in its terminal's foreground; unknown groups say no. */
export function isForeground(groups: Groups | undefined): boolean {
  return groups !== undefined && groups.tpgid > 0 && groups.pgrp === groups.tpgid;
}

/** This process's groups: from /proc on Linux, else from `ps`; `undefined` when neither tells. */
function ownGroups(): Groups | undefined {
  try {
    if (process.platform === 'linux') return groupsOfStat(readFileSync('/proc/self/stat', 'utf8'));
    const [pgrp, tpgid] = execFileSync('ps', ['-o', 'pgid=,tpgid=', '-p', String(process.pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2_000,
    })
      .trim()
      .split(/\s+/);
    return groupsOf(pgrp, tpgid);
  } catch {
    return undefined;
  }
}

/**
 * True when keys may be read from `stdin`: a terminal, with this process in its foreground. Windows
 * has no background jobs of this kind; elsewhere, when the groups cannot be told, the answer is no
 * (plain SIGINT handling, no questions asked), which never stops the process.
 */
export function readsKeys(stdin: { readonly isTTY?: boolean | undefined }): boolean {
  if (stdin.isTTY !== true) return false;
  return process.platform === 'win32' || isForeground(ownGroups());
}
