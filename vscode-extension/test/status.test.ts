import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { BreakCountStatus, countBreaks, statusView } from '../src/status';
import { makeDocument, stub } from './helpers/vscode-stub';

const gm = (code: string | number | { value: string | number; target?: string }) => ({ source: 'graphmend', code });

describe('countBreaks', () => {
  it("counts GraphMend's diagnostics except GM001 (syntax error)", () => {
    assert.equal(countBreaks([]), 0);
    assert.equal(countBreaks([gm('GM101'), gm('GM201'), gm('GM001'), gm('GM401')] as never), 3);
  });

  it("ignores other tools' diagnostics", () => {
    assert.equal(countBreaks([{ source: 'Pylance', code: 'reportUndefinedVariable' }, { source: 'ruff', code: 'F401' }, gm('GM102')]), 1);
    assert.equal(countBreaks([{ code: 'GM101' }]), 0);
  });

  it('reads codes given as { value, target } and as numbers', () => {
    assert.equal(countBreaks([gm({ value: 'GM301', target: 'https://x' }), gm({ value: 'GM001' }), gm(7)] as never), 2);
  });
});

describe('statusView', () => {
  it('shows the count for a Python file', () => {
    assert.deepEqual(statusView('python', 'running', 3), {
      visible: true,
      text: '$(pulse) GraphMend: 3 breaks',
      tooltip: 'GraphMend found 3 torch.compile graph breaks in this file. Click to open the Problems view.',
      command: 'workbench.actions.view.problems',
    });
    assert.equal(statusView('python', 'running', 1).text, '$(pulse) GraphMend: 1 break');
    assert.equal(statusView('python', 'running', 0).text, '$(check) GraphMend: no breaks');
    assert.equal(statusView('python', 'running', 0).command, undefined);
  });

  it('is hidden for other languages, no editor, or when disabled', () => {
    assert.equal(statusView('markdown', 'running', 2).visible, false);
    assert.equal(statusView(undefined, 'running', 0).visible, false);
    assert.equal(statusView('python', 'disabled', 2).visible, false);
  });

  it('says when the server is not running instead of claiming "no breaks"', () => {
    const view = statusView('python', 'error', 0);
    assert.equal(view.text, '$(warning) GraphMend: not running');
    assert.equal(view.command, 'graphmend.showOutput');
    assert.equal(statusView('python', 'starting', 0).text, '$(sync~spin) GraphMend');
  });
});

describe('BreakCountStatus (with the vscode stub)', () => {
  beforeEach(() => stub.reset());

  it('follows the active editor and its diagnostics', () => {
    const status = new BreakCountStatus();
    const item = stub.statusItems[0];
    status.setState('running');
    assert.equal(item.visible, false, 'no editor: hidden');

    const doc = makeDocument('/w/model.py');
    stub.setActiveEditor(doc);
    assert.equal(item.visible, true);
    assert.equal(item.text, '$(check) GraphMend: no breaks');

    stub.setDiagnostics(doc.uri, [gm('GM101'), gm('GM201'), gm('GM001'), { source: 'ruff', code: 'E501' }]);
    assert.equal(item.text, '$(pulse) GraphMend: 2 breaks');

    // Diagnostics of another file do not touch the item.
    stub.diagnostics.set(doc.uri.toString(), [gm('GM101')]);
    stub.setDiagnostics(makeDocument('/w/other.py').uri, [gm('GM101')]);
    assert.equal(item.text, '$(pulse) GraphMend: 2 breaks');
    stub.setDiagnostics(doc.uri, [gm('GM101')]);
    assert.equal(item.text, '$(pulse) GraphMend: 1 break');

    stub.setActiveEditor(makeDocument('/w/README.md', 'markdown'));
    assert.equal(item.visible, false);

    stub.setActiveEditor(doc);
    status.setState('error');
    assert.equal(item.text, '$(warning) GraphMend: not running');
    status.setState('disabled');
    assert.equal(item.visible, false);

    status.dispose();
    assert.equal(stub.onDidChangeDiagnostics.listenerCount, 0);
    assert.equal(stub.onDidChangeActiveTextEditor.listenerCount, 0);
  });
});
