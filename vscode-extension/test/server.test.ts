import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { RevealOutputChannelOn } from 'vscode-languageclient/node';
import { DOCUMENT_SELECTOR, fixAllParams, makeClientOptions, makeServerOptions, notAppliedReason, serverArgs } from '../src/server';
import { defaultOptions } from '../src/settings';

describe('server options', () => {
  it('runs `<python> [extra args] -m graphmend serve` (nothing appended: no --stdio) in the folder', () => {
    assert.deepEqual(makeServerOptions({ command: '/venv/bin/python', args: ['-X', 'utf8'], source: 'setting' }, '/work/proj'), {
      command: '/venv/bin/python',
      args: ['-X', 'utf8', '-m', 'graphmend', 'serve'],
      options: { cwd: '/work/proj' },
    });
    assert.deepEqual(serverArgs({ command: 'python', args: [], source: 'pythonExtension' }), ['-m', 'graphmend', 'serve']);
    assert.deepEqual(makeServerOptions({ command: 'python', args: [], source: 'setting' }, undefined), {
      command: 'python',
      args: ['-m', 'graphmend', 'serve'],
      options: {},
    });
  });
});

describe('client options', () => {
  it('selects Python files, untitled Python buffers and notebook Python cells, never reveals the log, passes the settings', () => {
    const channel = { name: 'GraphMend' } as vscode.OutputChannel;
    const init = { ...defaultOptions(), scope: 'module' as const };
    const options = makeClientOptions(init, channel);
    assert.deepEqual(options.documentSelector, [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
      { notebook: '*', language: 'python' },
    ]);
    assert.equal(options.documentSelector, DOCUMENT_SELECTOR);
    assert.equal(options.outputChannel, channel);
    assert.equal(options.traceOutputChannel, channel);
    assert.equal(options.revealOutputChannelOn, RevealOutputChannelOn.Never);
    assert.equal(options.initializationOptions, init);
    assert.equal(options.synchronize, undefined, 'nothing synchronized: the server asks for configuration');
  });
});

describe('fixAllParams', () => {
  it('is graphmend.fixAll with [{uri, version}]', () => {
    assert.deepEqual(fixAllParams('file:///w/model.py', 7), {
      command: 'graphmend.fixAll',
      arguments: [{ uri: 'file:///w/model.py', version: 7 }],
    });
  });
});

describe('notAppliedReason', () => {
  it("gives the server's reason when graphmend.fixAll did not apply", () => {
    assert.equal(notAppliedReason({ applied: false, reason: 'nothing to mend' }), 'nothing to mend');
    assert.equal(notAppliedReason({ applied: false, reason: 'the document changed; run the command again.' }), 'the document changed; run the command again');
    assert.equal(notAppliedReason({ applied: false }), 'the file was not changed');
  });

  it('is undefined when it applied or answered something else', () => {
    assert.equal(notAppliedReason({ applied: true }), undefined);
    assert.equal(notAppliedReason(null), undefined);
    assert.equal(notAppliedReason('done'), undefined);
  });
});
