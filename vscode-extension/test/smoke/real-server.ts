// A manual check against the real server (not part of `npm test`, which must not depend on the
// Python side): activates the extension against the vscode stub with `graphmend.interpreter` set
// to PYTHON, opens FILE, waits for diagnostics, runs "Mend All Graph Breaks in This File" and
// shuts down, printing what happened. Exit code 0 when the server started and reported breaks.
//
//   npm run smoke -w vscode-extension -- [PYTHON] [FILE]
//   (defaults: <repo>/.venv/bin/python and <repo>/examples/tiny_model.py)

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { activate, deactivate } from '../../src/extension';
import { makeDocument, stub } from '../helpers/vscode-stub';

const repo = path.resolve(__dirname, '..', '..', '..', '..');
const python = path.resolve(process.argv[2] ?? path.join(repo, '.venv', 'bin', 'python'));
const source = path.resolve(process.argv[3] ?? path.join(repo, 'examples', 'tiny_model.py'));

async function waitFor(what: string, probe: () => boolean, timeoutMs: number): Promise<boolean> {
  const started = Date.now();
  while (!probe()) {
    if (Date.now() - started > timeoutMs) {
      console.log(`  (gave up waiting for ${what} after ${timeoutMs} ms)`);
      return false;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

async function main(): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'graphmend-smoke-'));
  const file = path.join(dir, path.basename(source));
  copyFileSync(source, file);
  const doc = makeDocument(file, 'python', 1, readFileSync(file, 'utf8'));
  stub.workspaceFolders = [{ uri: stub.fileUri(dir), name: 'smoke', index: 0 }];
  stub.config = { interpreter: [python], logLevel: 'debug' };
  stub.openDocument(doc);
  stub.setActiveEditor(doc);

  console.log(`python: ${python}\nfile:   ${source} (copied to ${dir})`);
  const started = Date.now();
  activate({ subscriptions: [], extension: { packageJSON: { version: 'smoke' } } } as unknown as vscode.ExtensionContext);
  await stub.commands.get('graphmend.restart')!();
  const running = stub.commands.has('graphmend.fixAll');
  console.log(`server running: ${running} (${Date.now() - started} ms); server commands registered: ${[...stub.commands.keys()].filter((c) => !['graphmend.restart', 'graphmend.showOutput', 'graphmend.mendFile'].includes(c)).join(', ') || 'none'}`);

  const item = stub.statusItems[0];
  await waitFor('diagnostics', () => (stub.diagnostics.get(doc.uri.toString())?.length ?? 0) > 0, 30_000);
  const diagnostics = (stub.diagnostics.get(doc.uri.toString()) ?? []) as { source?: string; code?: unknown; message?: string }[];
  console.log(`diagnostics: ${diagnostics.length}`);
  for (const d of diagnostics) console.log(`  ${d.source} ${JSON.stringify(d.code)} ${d.message?.split('\n')[0]}`);
  console.log(`status bar: ${item.visible ? item.text : '(hidden)'}`);

  if (running) {
    await stub.commands.get('graphmend.mendFile')!();
    console.log(`mendFile: ${stub.appliedEdits.length} workspace edit(s) applied, ${stub.appliedEdits.reduce((n, e) => n + e.edits.length, 0)} text edit(s)`);
  }
  for (const m of stub.messages) console.log(`message (${m.severity}): ${m.message} [${m.items.join(' | ')}]`);

  await deactivate();
  console.log('--- output channel ---');
  for (const o of stub.output) console.log(`${o.level}: ${o.message}`);
  rmSync(dir, { recursive: true, force: true });
  return running && diagnostics.length > 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
