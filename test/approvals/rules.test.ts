// Claude Code's permission rules as grove reads them (DESIGN §15): what each form allows, and
// that a rule grove cannot read, or a command that hides a second one, is never allowed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstMatch, parseRule, ruleFor, ruleMatches } from '../../daemon/approvals/rules.ts';
import { innerCommand } from '../../daemon/bridges/codex.ts';

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

// Claude Code's documented Bash rule semantics (code.claude.com/docs/en/permissions; the passages
// are quoted in docs/decisions/approvals.md), row by row from the documentation's own examples.
const allowedBy = (rules: string[], command: string) => firstMatch(rules, bash(command), CWD);

test('issue 41: `tee ran.txt </dev/null && echo done` under Bash(tee:*) is allowed; a part no rule allows and that is not read-only still asks', () => {
  assert.equal(allowedBy(['Bash(tee:*)'], 'tee ran.txt </dev/null && echo done'), 'Bash(tee:*)');
  assert.equal(allowedBy(['Bash(tee:*)'], 'tee ran2.txt </dev/null && touch other.txt'), null);
  assert.equal(allowedBy(['Bash(tee:*)'], 'echo done && rm -rf x'), null);
});

test('wildcard patterns: the documentation\'s table of rules, what each matches and what it does not', () => {
  const rows: Array<[string, string[], string[]]> = [
    ['Bash(npm run build)', ['npm run build'], ['npm run build --watch']],
    ['Bash(npm run *)', ['npm run build', 'npm run test --watch', 'npm run'], ['npm install']],
    ['Bash(git log * main)', ['git log --oneline main', 'git log -5 main', 'git log --output=log.txt main'], ['git log main', 'git push origin main']],
    ['Bash(git * main)', ['git merge main', 'git push origin main', 'git -c core.fsmonitor=./x.sh diff main'], ['git log']],
    ['Bash(* --version)', ['node --version', "bash -c 'echo hi' --version"], ['node -v']],
    ['Bash(ls *)', ['ls -la', 'ls'], ['lsof']],
    ['Bash(ls*)', ['ls -la', 'lsof'], []],
    ['Bash(* --help *)', ['npm --help x'], ['npm --help']],
    ['Bash(ls:*)', ['ls -la', 'ls'], ['lsof']],
    ['Bash(npm run test:*)', ['npm run test', 'npm run test -- --watch'], ['npm run testing']],
    ['Bash(git:* push)', ['git:* push'], ['git push', 'git push origin']],
    ['Bash(*)', ['anything at all', 'x $(y)'], []],
  ];
  for (const [rule, yes, no] of rows) {
    for (const c of yes) assert.equal(allows(rule, bash(c)), true, `${rule} allows ${c}`);
    for (const c of no) assert.equal(allows(rule, bash(c)), false, `${rule} does not allow ${c}`);
  }
});

test('compound commands: split at && || ; | |& & and newlines, each part allowed on its own; a prefix rule never allows the whole line', () => {
  const rules = ['Bash(npm test:*)', 'Bash(npm run lint)'];
  for (const sep of [' && ', ' || ', '; ', ' | ', ' |& ', ' & ', '\n']) {
    assert.equal(allowedBy(rules, `npm test${sep}npm run lint`), 'Bash(npm test:*), Bash(npm run lint)', JSON.stringify(sep));
    assert.equal(allowedBy(rules, `npm test${sep}other-cmd`), null, JSON.stringify(sep));
  }
  assert.equal(allows('Bash(safe-cmd *)', bash('safe-cmd && other-cmd')), false);
  assert.equal(allows('Bash(safe-cmd *)', bash('safe-cmd a && safe-cmd b')), true);
  assert.equal(allows('Bash(git commit *)', bash('git commit -m "a; b && c | d"')), true, 'operators inside quotes are text');
  assert.equal(allows('Bash(git commit *)', bash("git commit -m 'x' && git push")), false);
  assert.equal(allows('Bash(npm *)', bash('npm test &&')), false, 'an operator with nothing after it is unparsable');
  assert.equal(allows('Bash(npm *)', bash('npm test ||')), false);
  assert.equal(allows('Bash(npm *)', bash('npm test |')), false);
  assert.equal(allows('Bash(npm *)', bash('npm test;')), true, 'a trailing ; ends the line');
});

test('read-only commands need no rule beside an allowed one; their write forms are not read-only', () => {
  const rule = ['Bash(npm test:*)'];
  for (const ro of ['ls -la', 'cat README.md', 'echo "exit=$?"', 'pwd', 'head -3 a.txt', 'tail -n 5 a.txt', 'grep -rn x src', 'find . -name "*.log"', 'wc -l src/*.py', 'which node', 'diff a b', 'stat a', 'du -sh .', 'ls *.ts', 'git status', 'git log --oneline -5', 'git diff HEAD', 'cd packages/api && ls', `cd ${CWD}`]) {
    assert.equal(allowedBy(rule, `npm test && ${ro}`), 'Bash(npm test:*)', ro);
  }
  for (const notRo of ['touch x', 'rm -rf x', 'sed -i s/a/b/ f', 'sort -o x y', 'find . -delete', 'find . -name *.log', 'find . -fprint x', 'git push', 'git commit -m x', 'git -c core.pager=x log', 'git log --output=x', 'git diff --ext-diff', 'git log *.ts', 'cd /tmp', 'cd ..', 'cd', 'cd ~', 'cd $HOME', 'cd sub && git status', 'echo hi > out.txt', 'python3 x.py']) {
    assert.equal(allowedBy(rule, `npm test && ${notRo}`), null, notRo);
  }
  assert.equal(allowedBy(['Edit', ...rule], 'npm test && echo hi > out.txt'), 'Bash(npm test:*), Edit', 'an Edit rule covers the file it writes');
  // A line of read-only commands alone is never asked by Claude Code; another agent asking for one wants more than reading.
  assert.equal(allowedBy(['Edit'], 'ls -la && cat README.md'), null);
});

test('redirections: no file behind it is not checked; a file read or written must be a literal name in the worktree, never a protected folder', () => {
  const rule = ['Bash(npm test:*)', 'Bash(tee *)'];
  for (const ok of ['npm test </dev/null', 'npm test 2>&1', 'npm test >/dev/null 2>&1', 'npm test 2>/dev/null', 'npm test >&2', 'npm test <&0', 'npm test > out.txt', 'npm test >> out.txt', 'npm test &> out.txt', 'npm test < README.md', 'npm test 2>&1 | tee build.log', 'npm test | tee -a a.log b.log', 'grep x <<< "$y" && npm test', 'npm test > .claude/worktrees/x/log']) {
    assert.notEqual(allowedBy(rule, ok), null, ok);
  }
  assert.equal(allowedBy(rule, 'npm test | tee build.log'), 'Bash(npm test:*), Bash(tee *)');
  for (const no of ['npm test > /tmp/x', 'npm test > ../x', 'npm test > ~/x', 'npm test > *.txt', 'npm test > $OUT', 'npm test > .git/hooks/post-commit', 'npm test > .claude/settings.json', 'npm test < /etc/passwd', 'npm test | tee /tmp/x', 'npm test | tee .git/config', 'npm test | tee ~/x', 'cd sub && npm test > out.txt', 'npm test >', 'cat <<EOF\nx\nEOF']) {
    assert.equal(allowedBy(rule, no), null, no);
  }
});

test('shell grove cannot fully read is asked about, never allowed by a rule', () => {
  const rules = ['Bash(npm test:*)', 'Bash(echo *)', 'Bash(for *)', 'Bash(if *)'];
  for (const line of ['npm test $(rm x)', 'npm test `rm x`', 'echo "$(rm x)"', 'npm test <(cat x)', 'npm test >(cat)', '(cd x && npm test)', '{ npm test; }', 'FOO=1 npm test', 'for f in a; do npm test; done', 'if true; then npm test; fi', 'npm test "unclosed', "npm test 'unclosed", 'echo ${HOME}', 'echo $((1+2))', "echo $'\\x41'", 'npm test\\']) {
    assert.equal(allowedBy(rules, line), null, line);
  }
  // What `remember` keeps is the whole line as written: it allows that line again, and only it.
  const kept = ruleFor(bash('npm test && echo "$(date)"'));
  assert.equal(allows(kept, bash('npm test && echo "$(date)"')), true);
  assert.equal(allows(kept, bash('npm test && echo "$(rm x)"')), false);
});

test('Codex and ACP commands go through the same matcher: a Codex `bash -lc` line is read by its inner command', () => {
  assert.equal(firstMatch(['Bash(tee:*)'], bash(innerCommand("/bin/bash -lc 'tee ran.txt </dev/null && echo done'")), CWD), 'Bash(tee:*)');
  assert.equal(firstMatch(['Bash(tee:*)'], bash(innerCommand("/bin/bash -lc 'tee ran.txt && touch x'")), CWD), null);
});

test('Network(host:port) allows a connection to that host and port only (DESIGN §18); remember keeps that rule; Network allows every one', () => {
  const connect = (host: string, port: number) => ({ tool: 'Network', input: { host, port } });
  assert.equal(allows('Network(docs.rs:443)', connect('docs.rs', 443)), true);
  assert.equal(allows('Network(docs.rs:443)', connect('DOCS.rs.', 443)), true, 'host names are compared as DNS does');
  assert.equal(allows('Network(docs.rs:443)', connect('docs.rs', 80)), false);
  assert.equal(allows('Network(docs.rs:443)', connect('api.docs.rs', 443)), false, 'no subdomains');
  assert.equal(allows('Network(docs.rs:443)', connect('evil-docs.rs', 443)), false);
  assert.equal(allows('Network(docs.rs)', connect('docs.rs', 443)), false, 'a rule without a port names no target');
  assert.equal(allows('Network([::1]:8080)', connect('::1', 8080)), true);
  assert.equal(allows('Network(docs.rs:443)', { tool: 'Network', input: { host: 'docs.rs', port: '443' } }), false, 'an input that is not a target');
  assert.equal(allows('Network(docs.rs:443)', { tool: 'WebFetch', input: { url: 'https://docs.rs/' } }), false, 'a connection rule is not a fetch rule');
  assert.equal(allows('WebFetch(domain:docs.rs)', connect('docs.rs', 443)), false, 'nor the other way round');
  assert.equal(allows('Network', connect('anything.example', 1)), true);
  assert.equal(ruleFor(connect('Registry.NPMjs.org', 443)), 'Network(registry.npmjs.org:443)');
  assert.equal(ruleFor(connect('fe80::1', 22)), 'Network([fe80::1]:22)');
  assert.equal(firstMatch(['Bash(ls)', 'Network(127.0.0.1:5432)'], connect('127.0.0.1', 5432), CWD), 'Network(127.0.0.1:5432)');
});
