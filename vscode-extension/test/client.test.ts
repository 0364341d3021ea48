// The whole path with the real vscode-languageclient, against the vscode stub and a fake server
// (test/fixtures/fake-server.js) run by a fake "python": the command line, the
// initializationOptions the server receives, the commands the client registers for the server,
// diagnostics reaching the status bar, graphmend.mendFile's request, and shutdown.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { makeDocument, stub } from './helpers/vscode-stub';

const FAKE_SERVER = path.join(__dirname, '..', '..', 'test', 'fixtures', 'fake-server.js');

interface ExtensionModule {
  activate(context: vscode.ExtensionContext): void;
  deactivate(): Promise<void> | undefined;
}

// The same scenarios against the compiled sources and against the esbuild bundle that ships in
// the .vsix (with its own copy of vscode-languageclient).
const variants: [string, () => ExtensionModule][] = [
  ['sources', () => require('../src/extension') as ExtensionModule],
  ['bundle dist/extension.js', () => require(path.join(__dirname, '..', '..', 'dist', 'extension.js')) as ExtensionModule],
];

interface Received {
  received: { id?: number; method?: string; params?: unknown; result?: unknown };
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const [variant, load] of variants) describe(`the language client against a fake server (${variant})`, () => {
  const { activate, deactivate } = load();
  let dir: string;
  let logFile: string;
  let argsFile: string;
  let python: string;
  const received = (): Received['received'][] =>
    existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as Received).received) : [];
  const message = (method: string) => received().find((m) => m.method === method);

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'graphmend-client-'));
    logFile = path.join(dir, 'server-log.jsonl');
    argsFile = path.join(dir, 'args.txt');
    python = path.join(dir, 'python');
    writeFileSync(
      python,
      [
        '#!/bin/sh',
        `printf '%s\\n' "$@" "--" >> '${argsFile}'`,
        'if [ "$1" = "-c" ] || [ "$3" = "-c" ]; then',
        '  echo "graphmend-check python 3 11"; echo "graphmend-check graphmend 0.1.0"; exit 0',
        'fi',
        `GRAPHMEND_FAKE_LOG='${logFile}' exec '${process.execPath}' '${FAKE_SERVER}'`,
        '',
      ].join('\n'),
    );
    chmodSync(python, 0o755);
    stub.reset();
  });
  after(async () => {
    await deactivate();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the server, works with it, and shuts it down', async () => {
    const doc = makeDocument(path.join(dir, 'model.py'), 'python', 4, 'import torch\nprint(1)\n');
    stub.workspaceFolders = [{ uri: stub.fileUri(dir), name: 'w', index: 0 }];
    stub.openDocument(doc);
    stub.setActiveEditor(doc);
    stub.config = { interpreter: [python, '-X', 'utf8'], scope: 'compiled', select: ['GM1', 'GM2'], 'probe.timeoutSeconds': 30, logLevel: 'loud' };
    const context = { subscriptions: [], extension: { packageJSON: { version: '0.1.0' } } } as unknown as vscode.ExtensionContext;

    activate(context);
    await stub.commands.get('graphmend.restart')!();

    // The check, then the server, with the extra arguments first.
    const runs = readFileSync(argsFile, 'utf8').split('--\n').map((r) => r.split('\n').filter(Boolean));
    assert.deepEqual(runs[0].slice(0, 3), ['-X', 'utf8', '-c']);
    assert.deepEqual(runs[1], ['-X', 'utf8', '-m', 'graphmend', 'serve']);

    // initializationOptions exactly as the server expects them; the invalid logLevel replaced.
    const init = message('initialize') as { params: { initializationOptions: unknown; rootUri: string } };
    assert.deepEqual(init.params.initializationOptions, {
      enable: true,
      fixOnSave: false,
      userCache: true,
      unsafeFixes: false,
      runtime: 'vendor',
      lineLength: 88,
      conditionalSeverity: 'information',
      scope: 'compiled',
      select: ['GM1', 'GM2'],
      ignore: [],
      logLevel: 'info',
      configurationPreference: 'editorFirst',
      probe: { enable: false, timeoutSeconds: 30, device: 'auto' },
      workspaceTrusted: true,
    });
    assert.ok(stub.output.some((o) => o.level === 'warn' && o.message === 'graphmend.logLevel: "loud" is not one of error, warning, info, debug; using "info"'));

    // The client registered the server's commands (and nothing threw for a double registration).
    await waitFor('server commands', () => stub.commands.has('graphmend.fixAll'));
    assert.ok(stub.commands.has('graphmend.showLog'));

    // The server's log message lands in the output channel.
    await waitFor('logMessage', () => stub.output.some((o) => o.message.includes('fake server: initialized')));

    // workspace/configuration for "graphmend" is answered with the settings section.
    const answer = await waitFor('configuration answer', () => received().find((m) => m.method === undefined && m.id === 1));
    const [section] = answer.result as Record<string, unknown>[];
    assert.equal(section.scope, 'compiled');
    assert.deepEqual(section.probe, { timeoutSeconds: 30 });
    assert.equal(stub.statusItems[0].visible, true);

    // The open document is synced, its diagnostics reach the status bar (GM001 not counted).
    const opened = (await waitFor('didOpen', () => message('textDocument/didOpen'))) as { params: { textDocument: { uri: string; version: number } } };
    assert.equal(opened.params.textDocument.uri, doc.uri.toString());
    await waitFor('status count', () => stub.statusItems[0].text === '$(pulse) GraphMend: 2 breaks');

    // GraphMend: Mend All Graph Breaks in This File.
    await stub.commands.get('graphmend.mendFile')!();
    const exec = (await waitFor('executeCommand', () => message('workspace/executeCommand'))) as { params: unknown };
    assert.deepEqual(exec.params, { command: 'graphmend.fixAll', arguments: [{ uri: doc.uri.toString(), version: 4 }] });
    // The server's workspace/applyEdit reached VS Code's applyEdit, and nothing was said.
    assert.equal(stub.appliedEdits.length, 1);
    const [{ uri: editedUri, edit }] = stub.appliedEdits[0].edits;
    assert.equal(editedUri.toString(), doc.uri.toString());
    assert.equal(edit.newText, '_gm_defer(print, 1)');
    assert.equal(stub.messages.length, 0, JSON.stringify(stub.messages));
    // A second time the server has nothing to mend, and the user is told so.
    await stub.commands.get('graphmend.mendFile')!();
    assert.deepEqual(stub.messages, [{ severity: 'info', message: 'GraphMend: nothing to mend.', items: [] }]);

    // Deactivation shuts the server down.
    await deactivate();
    assert.ok(message('shutdown'), 'shutdown sent (and answered) before stop() returns');
    await waitFor('exit', () => message('exit')); // a notification: stop() does not wait for it to arrive
    assert.deepEqual(stub.messages.filter((m) => m.severity !== 'info'), []);
  });

  it('reports a server that exits while starting, once, without restarting it', async () => {
    stub.reset();
    const serveLog = path.join(dir, 'serve-runs.txt');
    const broken = path.join(dir, 'broken-python');
    writeFileSync(
      broken,
      [
        '#!/bin/sh',
        'if [ "$1" = "-c" ]; then echo "graphmend-check python 3 11"; echo "graphmend-check graphmend 0.1.0"; exit 0; fi',
        `echo run >> '${serveLog}'`,
        'sleep 0.3 # like Python, fail after its imports, with initialize waiting in the pipe',
        'echo "graphmend: error: the language server is not available in this build" >&2',
        'exit 2',
        '',
      ].join('\n'),
    );
    chmodSync(broken, 0o755);
    stub.config = { interpreter: [broken] };
    stub.setActiveEditor(makeDocument(path.join(dir, 'model.py')));
    activate({ subscriptions: [], extension: { packageJSON: { version: '0.1.0' } } } as unknown as vscode.ExtensionContext);
    await stub.commands.get('graphmend.restart')!();

    const errors = stub.messages.filter((m) => m.severity === 'error' && m.message.startsWith('GraphMend: the server did not start'));
    assert.equal(errors.length, 1, JSON.stringify(stub.messages) + stub.output.map((o) => o.message).join('\n'));
    assert.deepEqual(errors[0].items, ['Open Settings', 'Restart Server', 'Show Log']);
    assert.equal(stub.statusItems[0].text, '$(warning) GraphMend: not running');
    // The server's stderr is in the log.
    await waitFor('stderr in the log', () => stub.output.some((o) => o.message.includes('the language server is not available')));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(readFileSync(serveLog, 'utf8'), 'run\n', 'started once, not restarted');
    await deactivate();
  });
});
