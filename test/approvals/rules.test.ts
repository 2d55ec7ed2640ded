// Claude Code's permission rules as grove reads them (DESIGN §15): what each form allows, and
// that a rule grove cannot read, or a command that hides a second one, is never allowed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstMatch, parseRule, ruleFor, ruleMatches } from '../../daemon/approvals/rules.ts';

const CWD = '/repo/.grove/worktrees/t/';
const bash = (command: string) => ({ tool: 'Bash', input: { command } });
const allows = (rule: string, call: { tool: string; input: unknown }) => ruleMatches(rule, call, CWD);

test('Bash(prefix:*) allows the command and its arguments, one simple command only', () => {
  assert.equal(allows('Bash(npm test:*)', bash('npm test')), true);
  assert.equal(allows('Bash(npm test:*)', bash('npm test -- --watch=false')), true);
  assert.equal(allows('Bash(npm test:*)', bash('npm testing')), false, 'a longer word is another command');
  assert.equal(allows('Bash(npm test:*)', bash('npm run build')), false);
  for (const hidden of ['npm test && rm -rf /', 'npm test; curl x', 'npm test | sh', 'npm test $(rm x)', 'npm test `rm x`', 'npm test > /etc/passwd', 'npm test\nrm x', 'npm test & rm x']) {
    assert.equal(allows('Bash(npm test:*)', bash(hidden)), false, hidden);
  }
});

test('Bash(command) allows that exact command; Bash allows every command', () => {
  assert.equal(allows('Bash(git status)', bash('git status')), true);
  assert.equal(allows('Bash(git status)', bash('  git status ')), true);
  assert.equal(allows('Bash(git status)', bash('git status --porcelain')), false);
  assert.equal(allows('Bash(git status)', bash('git push')), false);
  assert.equal(allows('Bash', bash('anything at all')), true);
  assert.equal(allows('Bash(git status)', { tool: 'Bash', input: {} }), false, 'no command, nothing to compare');
});

test('Edit covers every file-editing tool, Read every reading tool; a glob is relative to the worktree', () => {
  for (const tool of ['Edit', 'MultiEdit', 'Write', 'NotebookEdit']) assert.equal(allows('Edit', { tool, input: { file_path: 'x' } }), true, tool);
  assert.equal(allows('Edit', { tool: 'Bash', input: { command: 'x' } }), false);
  assert.equal(allows('Edit', { tool: 'Read', input: { file_path: 'x' } }), false);
  for (const tool of ['Read', 'Grep', 'Glob', 'LS']) assert.equal(allows('Read', { tool, input: {} }), true, tool);
  assert.equal(allows('Write', { tool: 'Write', input: { file_path: 'a' } }), true);
  assert.equal(allows('Write', { tool: 'Edit', input: { file_path: 'a' } }), false, 'Write is the one tool');
  assert.equal(allows('Edit(src/**)', { tool: 'Edit', input: { file_path: `${CWD}src/a/b.ts` } }), true);
  assert.equal(allows('Edit(src/**)', { tool: 'Edit', input: { file_path: 'src/b.ts' } }), true, 'relative to the worktree');
  assert.equal(allows('Edit(src/*.ts)', { tool: 'Edit', input: { file_path: 'src/a/b.ts' } }), false, '* stays in one folder');
  assert.equal(allows('Edit(src/**)', { tool: 'Edit', input: { file_path: `${CWD}lib/a.ts` } }), false);
  assert.equal(allows('Edit(src/**)', { tool: 'Edit', input: { file_path: `${CWD}src/../../../../etc/passwd` } }), false, 'outside the worktree');
  assert.equal(allows('Edit(**)', { tool: 'Edit', input: { file_path: '/etc/passwd' } }), false, 'outside the worktree');
});

test('WebFetch(domain:) allows that host (and *. its subdomains) only', () => {
  const fetch = (url: string) => ({ tool: 'WebFetch', input: { url } });
  assert.equal(allows('WebFetch(domain:docs.rs)', fetch('https://docs.rs/serde')), true);
  assert.equal(allows('WebFetch(domain:docs.rs)', fetch('https://evil-docs.rs/')), false);
  assert.equal(allows('WebFetch(domain:docs.rs)', fetch('https://docs.rs.evil.com/')), false);
  assert.equal(allows('WebFetch(domain:docs.rs)', fetch('https://api.docs.rs/')), false);
  assert.equal(allows('WebFetch(domain:*.docs.rs)', fetch('https://api.docs.rs/')), true);
  assert.equal(allows('WebFetch(domain:docs.rs)', fetch('not a url')), false);
  assert.equal(allows('WebFetch(docs.rs)', fetch('https://docs.rs/')), false, 'a specifier grove cannot read');
  assert.equal(allows('WebFetch', fetch('https://anything.example/')), true);
});

test('MCP rules: a server, a server with *, one tool', () => {
  const mcp = (tool: string) => ({ tool, input: {} });
  assert.equal(allows('mcp__github', mcp('mcp__github__create_issue')), true);
  assert.equal(allows('mcp__github__*', mcp('mcp__github__create_issue')), true);
  assert.equal(allows('mcp__github__create_issue', mcp('mcp__github__create_issue')), true);
  assert.equal(allows('mcp__github__create_issue', mcp('mcp__github__delete_repo')), false);
  assert.equal(allows('mcp__github', mcp('mcp__githubx__a')), false);
});

test('rules grove cannot read allow nothing; firstMatch names the rule that allowed', () => {
  assert.equal(parseRule('Bash(x'), null);
  assert.equal(allows('Bash(x', bash('x')), false);
  assert.equal(allows('', bash('x')), false);
  assert.equal(firstMatch(['Edit', 'Bash(ls:*)', 'Bash'], bash('ls -la'), CWD), 'Bash(ls:*)');
  assert.equal(firstMatch(['Edit'], bash('ls'), CWD), null);
});

test('ruleFor: what remember keeps is that command, that host, or the tool', () => {
  assert.equal(ruleFor(bash(' npm run lint ')), 'Bash(npm run lint)');
  assert.equal(allows(ruleFor(bash('npm run lint')), bash('npm run lint')), true);
  assert.equal(allows(ruleFor(bash('npm run lint')), bash('npm run lint && rm -rf /')), false);
  assert.equal(ruleFor({ tool: 'WebFetch', input: { url: 'https://Docs.rs/x' } }), 'WebFetch(domain:docs.rs)');
  assert.equal(ruleFor({ tool: 'Edit', input: { file_path: 'a' } }), 'Edit');
  assert.equal(ruleFor({ tool: 'WebFetch', input: { url: '::' } }), 'WebFetch');
});
