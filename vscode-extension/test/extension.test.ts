// activate() against the vscode stub: commands, the error messages and their buttons, and the
// restarts on setting and interpreter changes. The server never starts here (every interpreter
// fails the check); test/client.test.ts starts a real language client.

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { activate, deactivate } from '../src/extension';
import { EventEmitter, makeDocument, stub, Uri } from './helpers/vscode-stub';

let dir: string;
/** A fake interpreter: Python 3.11 without graphmend. */
function pythonWithoutGraphmend(name: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\necho "graphmend-check python 3 11"\necho "ModuleNotFoundError: No module named 'graphmend'" >&2\nexit 1\n`);
  chmodSync(file, 0o755);
  return file;
}

function fakeContext(): vscode.ExtensionContext {
  return {
    subscriptions: [] as { dispose(): unknown }[],
    extension: { packageJSON: { version: '0.1.0' } },
  } as unknown as vscode.ExtensionContext;
}

/** A Python extension whose active environment the test sets. */
function installPythonExtension(executable: string) {
  const changed = new EventEmitter<{ id: string; path: string; resource: undefined }>();
  const env = { executable };
  const api = {
    environments: {
      getActiveEnvironmentPath: () => ({ id: env.executable, path: env.executable }),
      resolveEnvironment: async (p: { path: string }) => ({ id: p.path, path: p.path, executable: { uri: Uri.file(p.path) } }),
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
  stub.extensions.set('ms-python.python', { id: 'ms-python.python', isActive: false, exports: undefined, packageJSON: {}, activate: async () => api });
  return {
    select(path: string) {
      env.executable = path;
      changed.fire({ id: path, path, resource: undefined });
    },
    listeners: () => changed.listenerCount,
  };
}

const restart = () => stub.commands.get('graphmend.restart')!() as Promise<void>;
const errors = () => stub.messages.filter((m) => m.severity === 'error');
const statusText = () => (stub.statusItems[0]?.visible ? stub.statusItems[0].text : '(hidden)');
/** Lets the handlers that activation and events start (not awaited by anyone) run. */
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('activate (with the vscode stub)', () => {
  let context: vscode.ExtensionContext;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'graphmend-ext-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    await deactivate();
    stub.reset();
    stub.setActiveEditor(makeDocument('/w/model.py'));
    context = fakeContext();
  });

  it("registers its commands, but not the server's (the language client registers those)", async () => {
    activate(context);
    await restart();
    assert.deepEqual([...stub.commands.keys()].sort(), ['graphmend.mendFile', 'graphmend.restart', 'graphmend.showOutput']);
  });

  it('without an interpreter: says to install the Python extension or set graphmend.interpreter', async () => {
    activate(context);
    await restart();
    assert.equal(errors().length, 1);
    assert.deepEqual(errors()[0], {
      severity: 'error',
      message: 'GraphMend: no Python interpreter to run the server. Install the Python extension and select an interpreter, or set `graphmend.interpreter` to a Python 3.10+ executable that has graphmend installed.',
      items: ['Open Settings', 'Show Log'],
    });
    assert.equal(statusText(), '$(warning) GraphMend: not running');
  });

  it("uses the Python extension's interpreter; its error offers Select Interpreter, which runs python.setInterpreter", async () => {
    const py = pythonWithoutGraphmend('py-ext-python');
    installPythonExtension(py);
    stub.messageChoice = 'Select Interpreter';
    activate(context);
    await restart();
    assert.equal(errors().length, 1);
    assert.equal(errors()[0].message, `GraphMend: the interpreter ${py} cannot import graphmend. Run \`${py} -m pip install graphmend\` or set \`graphmend.interpreter\`.`);
    assert.deepEqual(errors()[0].items, ['Select Interpreter', 'Open Settings', 'Restart Server', 'Show Log']);
    await settle();
    assert.ok(stub.executed.some((e) => e.command === 'python.setInterpreter'), JSON.stringify(stub.executed));
  });

  it('"Open Settings" opens the graphmend.interpreter setting', async () => {
    stub.messageChoice = 'Open Settings';
    activate(context);
    await restart();
    await settle();
    assert.deepEqual(stub.executed.find((e) => e.command === 'workbench.action.openSettings')?.args, ['graphmend.interpreter']);
  });

  it('graphmend.interpreter wins over the Python extension, with its extra arguments', async () => {
    const fromExtension = pythonWithoutGraphmend('ext-python');
    const fromSetting = pythonWithoutGraphmend('setting-python');
    installPythonExtension(fromExtension);
    stub.config.interpreter = [fromSetting, '-X', 'utf8'];
    activate(context);
    await restart();
    assert.equal(errors().length, 1);
    assert.match(errors()[0].message, new RegExp(`Run \`${fromSetting} -X utf8 -m pip install graphmend\``));
    assert.deepEqual(errors()[0].items, ['Open Settings', 'Restart Server', 'Show Log'], 'no Select Interpreter: the setting decides');
  });

  it("restarts when the Python extension's interpreter changes, unless graphmend.interpreter is set", async () => {
    const first = pythonWithoutGraphmend('first-python');
    const second = pythonWithoutGraphmend('second-python');
    const python = installPythonExtension(first);
    activate(context);
    await restart();
    await settle();
    assert.equal(python.listeners(), 1, 'listens to onDidChangeActiveEnvironmentPath');
    python.select(second);
    await restart();
    assert.deepEqual(
      errors().map((m) => m.message.split(' cannot')[0]),
      [`GraphMend: the interpreter ${first}`, `GraphMend: the interpreter ${second}`],
    );

    stub.config.interpreter = [first];
    python.select(second);
    await settle();
    assert.equal(errors().length, 2, 'no restart: the setting decides');
  });

  it('restarts when a graphmend setting changes, and stops when graphmend.enable is false', async () => {
    activate(context);
    await restart();
    assert.equal(errors().length, 1);

    const py = pythonWithoutGraphmend('set-python');
    stub.changeConfig({ interpreter: [py] });
    await restart();
    assert.equal(errors().length, 2);
    assert.match(errors()[1].message, new RegExp(`the interpreter ${py} cannot import graphmend`));

    stub.changeConfig({ 'trace.server': 'verbose' });
    await settle();
    assert.equal(errors().length, 2, 'trace.server alone does not restart');

    stub.changeConfig({ enable: false });
    await settle();
    assert.equal(errors().length, 2, 'disabled: nothing to report');
    assert.equal(statusText(), '(hidden)');
    assert.ok(stub.output.some((o) => o.message.startsWith('graphmend.enable is false')));
  });

  it('mendFile without a running server says so', async () => {
    activate(context);
    await restart();
    await stub.commands.get('graphmend.mendFile')!();
    assert.deepEqual(stub.messages.at(-1), { severity: 'warning', message: 'GraphMend: the server is not running.', items: ['Show Log'] });
  });

  it('mendFile while graphmend.enable is false says so', async () => {
    stub.config.enable = false;
    activate(context);
    await restart();
    await stub.commands.get('graphmend.mendFile')!();
    assert.deepEqual(stub.messages, [{ severity: 'warning', message: 'GraphMend is turned off (`graphmend.enable` is false).', items: [] }]);
    assert.equal(statusText(), '(hidden)');
  });

  it('mendFile outside a Python file asks for one', async () => {
    activate(context);
    await restart();
    stub.setActiveEditor(makeDocument('/w/notes.md', 'markdown'));
    await stub.commands.get('graphmend.mendFile')!();
    assert.equal(stub.messages.at(-1)?.message, 'GraphMend: open a Python file to mend its graph breaks.');
  });

  it('showOutput shows the log', async () => {
    activate(context);
    await restart();
    await stub.commands.get('graphmend.showOutput')!();
    assert.equal(stub.outputShown, 1);
  });

  it('starts using the Python extension when it is installed later', async () => {
    activate(context);
    await restart();
    assert.equal(errors().length, 1);
    const py = pythonWithoutGraphmend('late-python');
    installPythonExtension(py);
    stub.onDidChangeExtensions.fire();
    await settle();
    await restart();
    assert.ok(errors().some((m) => m.message.includes(`the interpreter ${py} cannot import graphmend`)), errors().map((m) => m.message).join('\n'));
  });
});
