import assert from 'node:assert/strict';
import test from 'node:test';
import { agentModes, buildCommand, modeArgs } from '../daemon/agents/agents.ts';
import { GroveError } from '../daemon/errors.ts';

test('buildCommand: mode and request args just before {prompt} (before its --), the prompt as one argument, dropped with its -- when absent', () => {
  const def = { command: ['tool', '-x', '--', '{prompt}', '--tail'] };
  assert.deepEqual(buildCommand(def, { prompt: '--version', before: ['--m', 'a'] }), ['tool', '-x', '--m', 'a', '--', '--version', '--tail']);
  assert.deepEqual(buildCommand(def, { prompt: undefined, before: ['--m'] }), ['tool', '-x', '--m', '--tail']);
  assert.deepEqual(buildCommand(def, { prompt: '', before: [] }), ['tool', '-x', '--tail'], 'an empty prompt is no prompt');
  assert.deepEqual(buildCommand({ command: ['tool', '{prompt}'] }, { prompt: '- a', before: ['b'] }), ['tool', 'b', '- a'], 'no -- in the template: right before the prompt');
  assert.deepEqual(buildCommand({ command: ['tool', 'run'] }, { prompt: 'ignored', before: ['b'] }), ['tool', 'run', 'b'], 'no {prompt}: at the end');
  assert.deepEqual(buildCommand({ command: ['{prompt}'] }, { prompt: 'p', before: [] }), ['p']);
});

test('modes: an agent without modes has edit only; a mode it does not list is MODE_UNSUPPORTED', () => {
  assert.deepEqual(agentModes({ command: ['x'] }), { edit: [] });
  assert.deepEqual(modeArgs({ command: ['x'] }, 'x', 'edit'), []);
  assert.throws(() => modeArgs({ command: ['x'] }, 'x', 'full'), (e: unknown) => e instanceof GroveError && e.code === 'MODE_UNSUPPORTED' && e.status === 422);
  const def = { command: ['x'], modes: { read: ['--ro'], full: ['--yolo'] } };
  assert.deepEqual(modeArgs(def, 'x', 'read'), ['--ro']);
  assert.throws(() => modeArgs(def, 'x', 'edit'), /x cannot run in mode edit; it supports read, full/);
});
