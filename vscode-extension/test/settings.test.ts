import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  defaultOptions,
  needsRestart,
  readInitializationOptions,
  readInterpreterSetting,
  substituteVariables,
} from '../src/settings';

/** A configuration section from a flat map, as vscode's `get('probe.enable')` reads it. */
function config(values: Record<string, unknown>) {
  return { get: (key: string) => values[key] };
}

describe('readInitializationOptions', () => {
  it('gives the defaults, in exactly the shape the server expects, when nothing is set', () => {
    const { value, problems } = readInitializationOptions(config({}));
    assert.deepEqual(value, {
      enable: true,
      fixOnSave: false,
      userCache: true,
      unsafeFixes: false,
      runtime: 'vendor',
      lineLength: 88,
      conditionalSeverity: 'information',
      scope: 'default',
      select: [],
      ignore: [],
      logLevel: 'info',
      configurationPreference: 'editorFirst',
      probe: { enable: false, timeoutSeconds: 120, device: 'auto' },
    });
    assert.deepEqual(problems, []);
  });

  it('maps every setting, probe.* into the nested probe object', () => {
    const { value, problems } = readInitializationOptions(
      config({
        enable: false,
        fixOnSave: true,
        userCache: false,
        unsafeFixes: true,
        runtime: 'inline',
        lineLength: 100,
        conditionalSeverity: 'hint',
        scope: 'module',
        select: ['GM1', 'GM201'],
        ignore: ['GM403'],
        logLevel: 'debug',
        configurationPreference: 'editorOnly',
        'probe.enable': true,
        'probe.timeoutSeconds': 30.5,
        'probe.device': 'cuda',
        interpreter: ['/usr/bin/python3'], // client-side: not sent to the server
      }),
    );
    assert.deepEqual(value, {
      enable: false,
      fixOnSave: true,
      userCache: false,
      unsafeFixes: true,
      runtime: 'inline',
      lineLength: 100,
      conditionalSeverity: 'hint',
      scope: 'module',
      select: ['GM1', 'GM201'],
      ignore: ['GM403'],
      logLevel: 'debug',
      configurationPreference: 'editorOnly',
      probe: { enable: true, timeoutSeconds: 30.5, device: 'cuda' },
    });
    assert.deepEqual(problems, []);
  });

  it('accepts every documented enum value', () => {
    for (const scope of ['default', 'compiled', 'module']) {
      assert.equal(readInitializationOptions(config({ scope })).value.scope, scope);
    }
    for (const logLevel of ['error', 'warning', 'info', 'debug']) {
      assert.equal(readInitializationOptions(config({ logLevel })).value.logLevel, logLevel);
    }
    for (const p of ['editorFirst', 'filesystemFirst', 'editorOnly']) {
      assert.equal(readInitializationOptions(config({ configurationPreference: p })).value.configurationPreference, p);
    }
    for (const device of ['auto', 'cpu', 'cuda']) {
      assert.equal(readInitializationOptions(config({ 'probe.device': device })).value.probe.device, device);
    }
  });

  it('replaces invalid values by their defaults and says which', () => {
    const { value, problems } = readInitializationOptions(
      config({
        enable: 'yes',
        fixOnSave: 1,
        scope: 'everything',
        logLevel: 'verbose',
        configurationPreference: 'EditorFirst',
        'probe.enable': 'true',
        'probe.timeoutSeconds': -5,
        'probe.device': 'tpu',
        select: 'not-a-list-but-a-string-is-fine',
        ignore: { GM1: true },
      }),
    );
    const d = defaultOptions();
    assert.equal(value.enable, d.enable);
    assert.equal(value.fixOnSave, d.fixOnSave);
    assert.equal(value.scope, 'default');
    assert.equal(value.logLevel, 'info');
    assert.equal(value.configurationPreference, 'editorFirst');
    assert.deepEqual(value.probe, d.probe);
    assert.deepEqual(value.select, ['not-a-list-but-a-string-is-fine']);
    assert.deepEqual(value.ignore, []);
    assert.equal(problems.length, 9);
    assert.ok(problems.includes('graphmend.scope: "everything" is not one of default, compiled, module; using "default"'), problems.join('\n'));
    assert.ok(problems.includes('graphmend.probe.timeoutSeconds: -5 is not a positive number; using 120'), problems.join('\n'));
    assert.ok(problems.includes('graphmend.enable: "yes" is not true or false; using true'), problems.join('\n'));
    assert.ok(problems.includes('graphmend.ignore: {"GM1":true} is not a list of strings; using []'), problems.join('\n'));
  });

  it('rejects timeouts that are not finite positive numbers', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '30', true]) {
      const { value, problems } = readInitializationOptions(config({ 'probe.timeoutSeconds': bad }));
      assert.equal(value.probe.timeoutSeconds, 120, String(bad));
      assert.equal(problems.length, 1, String(bad));
    }
  });

  it('keeps the string entries of select/ignore (trimmed) and reports the others', () => {
    const { value, problems } = readInitializationOptions(config({ select: [' GM1 ', '', 7, null, 'GM4'], ignore: null }));
    assert.deepEqual(value.select, ['GM1', 'GM4']);
    assert.deepEqual(value.ignore, []);
    assert.equal(problems.length, 3);
    assert.match(problems[0], /^graphmend\.select: ignoring the entry ""/);
  });

  it('treats null like unset', () => {
    const { value, problems } = readInitializationOptions(config({ enable: null, scope: null, 'probe.enable': null }));
    assert.deepEqual(value, defaultOptions());
    assert.deepEqual(problems, []);
  });
});

describe('package.json contributes the settings read here', () => {
  const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const props = manifest.contributes.configuration.properties as Record<string, { default: unknown; enum?: string[] }>;

  it('with the same defaults', () => {
    const fromManifest: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(props)) fromManifest[key.replace(/^graphmend\./, '')] = schema.default;
    assert.deepEqual(readInitializationOptions(config(fromManifest)), { value: defaultOptions(), problems: [] });
  });

  it('with every option key of initializationOptions, plus the client-side interpreter and trace', () => {
    const keys = Object.keys(props).map((k) => k.replace(/^graphmend\./, '')).sort();
    const expected = [
      'conditionalSeverity', 'configurationPreference', 'enable', 'fixOnSave', 'ignore', 'interpreter', 'lineLength', 'logLevel',
      'probe.device', 'probe.enable', 'probe.timeoutSeconds', 'runtime', 'scope', 'select', 'trace.server',
      'unsafeFixes', 'userCache',
    ];
    assert.deepEqual(keys, expected);
  });

  it('with the enum values accepted here', () => {
    assert.deepEqual(props['graphmend.scope'].enum, ['default', 'compiled', 'module']);
    assert.deepEqual(props['graphmend.logLevel'].enum, ['error', 'warning', 'info', 'debug']);
    assert.deepEqual(props['graphmend.configurationPreference'].enum, ['editorFirst', 'filesystemFirst', 'editorOnly']);
    assert.deepEqual(props['graphmend.probe.device'].enum, ['auto', 'cpu', 'cuda']);
    assert.deepEqual(props['graphmend.conditionalSeverity'].enum, ['error', 'warning', 'information', 'hint']);
  });
});

describe('readInterpreterSetting', () => {
  const subs = { workspaceFolder: '/ws', userHome: '/home/u', env: { VENV: '/opt/venv' } };

  it('is empty when unset, so the Python extension decides', () => {
    assert.deepEqual(readInterpreterSetting(config({}), subs), { value: [], problems: [] });
    assert.deepEqual(readInterpreterSetting(config({ interpreter: [] }), subs), { value: [], problems: [] });
  });

  it('expands ${workspaceFolder}, ${userHome}, ${env:NAME} and a leading ~', () => {
    const { value } = readInterpreterSetting(
      config({ interpreter: ['${workspaceFolder}/.venv/bin/python', '-X', 'utf8', '${env:VENV}/x', '~/y', '${userHome}'] }),
      subs,
    );
    assert.deepEqual(value, ['/ws/.venv/bin/python', '-X', 'utf8', '/opt/venv/x', '/home/u/y', '/home/u']);
  });

  it('accepts a single string as the executable', () => {
    assert.deepEqual(readInterpreterSetting(config({ interpreter: '/usr/bin/python3' }), subs).value, ['/usr/bin/python3']);
  });
});

describe('substituteVariables', () => {
  it('leaves ${workspaceFolder} as is when no folder is open, and unknown variables alone', () => {
    assert.equal(substituteVariables('${workspaceFolder}/py', {}), '${workspaceFolder}/py');
    assert.equal(substituteVariables('${foo}/py', { workspaceFolder: '/w' }), '${foo}/py');
    assert.equal(substituteVariables('${env:NOPE_NOT_SET}/py', { env: {} }), '/py');
    assert.equal(substituteVariables('a~b', { userHome: '/h' }), 'a~b');
  });
});

describe('needsRestart', () => {
  const affects = (...changed: string[]) => (section: string) =>
    changed.some((c) => c === section || c.startsWith(`${section}.`) || section.startsWith(`${c}.`));

  it('restarts for any graphmend setting', () => {
    for (const key of ['enable', 'interpreter', 'fixOnSave', 'unsafeFixes', 'scope', 'select', 'ignore', 'logLevel', 'configurationPreference', 'probe.enable', 'probe.device']) {
      assert.equal(needsRestart(affects(`graphmend.${key}`)), true, key);
    }
  });

  it('does not restart for other extensions or for graphmend.trace.server alone', () => {
    assert.equal(needsRestart(affects('python.defaultInterpreterPath')), false);
    assert.equal(needsRestart(affects('graphmend.trace.server')), false);
    assert.equal(needsRestart(affects('graphmend.trace.server', 'graphmend.scope')), true);
  });
});
