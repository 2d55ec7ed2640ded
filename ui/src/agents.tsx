// The agent and mode of a new session: the task page's New session form and the New task form's
// first prompt pick them with the same fields, and say the same when no agent is installed.
import { MODES } from '../../schemas/modes.ts';
import type { AgentList } from '../../schemas/session.ts';
import { api } from './api.ts';
import { Field, fieldError, inputProps } from './form.tsx';
import { useLoad } from './hooks.ts';

// The codes the agent and mode fields claim; a form's FormError leaves them to the fields.
export const AGENT_CODES = ['UNKNOWN_AGENT', 'AGENT_NOT_INSTALLED', 'AGENT_REQUIRED', 'MODE_UNSUPPORTED'];

export function useAgents(): AgentList | undefined {
  return useLoad(() => api<AgentList>('GET', '/api/agents'), []).value;
}

// Loaded, and not one of them on the daemon's PATH.
export function noAgent(agents: AgentList | undefined): agents is AgentList {
  return agents !== undefined && !agents.some((a) => a.available);
}

// How to install each built-in agent's CLI (as docs/agents.md says), for a daemon that finds none.
const INSTALL: Record<string, { title: string; command: string }> = {
  claude: { title: 'Claude Code', command: 'npm i -g @anthropic-ai/claude-code' },
  codex: { title: 'Codex', command: 'npm i -g @openai/codex' },
  gemini: { title: 'Gemini CLI', command: 'npm i -g @google/gemini-cli' },
  opencode: { title: 'OpenCode', command: 'npm i -g opencode-ai' },
  amp: { title: 'Amp', command: 'npm i -g @sourcegraph/amp' },
  copilot: { title: 'GitHub Copilot CLI', command: 'npm i -g @github/copilot' },
  qwen: { title: 'Qwen Code', command: 'npm i -g @qwen-code/qwen-code' },
  cursor: { title: 'Cursor Agent', command: 'curl https://cursor.com/install -fsS | bash' },
  aider: { title: 'aider', command: 'python -m pip install aider-install && aider-install' },
};

// Why the agent picker offers nothing: the agents grove knows, that none is on the daemon's
// PATH, and how to install one or define one's own.
function NoAgents({ agents }: { agents: AgentList }) {
  const builtins = agents.filter((a) => a.builtin && INSTALL[a.name]);
  return (
    <div class="no-agents" id="no-agents">
      <p>
        No agent is installed: grove knows {agents.map((a) => a.name).join(', ')}, and none of their commands is on the daemon's PATH. Install one, then open this page again:
      </p>
      <ul>
        {builtins.map((a) => (
          <li key={a.name}>
            {INSTALL[a.name]!.title}: <code>{INSTALL[a.name]!.command}</code>
          </li>
        ))}
      </ul>
      <p>
        Or define your own agent under <code>agents</code> in the user config (see docs/agents.md).
      </p>
    </div>
  );
}

// The agent and mode fields, with the API's messages for them; `at` is where the session's
// fields are in the request's body ('session/' for a task's first session); `ids` prefixes their
// ids where two such forms share a page (a project's board).
export function AgentChoice({ agents, error, at = '', ids = 'f-' }: { agents: AgentList | undefined; error: unknown; at?: string; ids?: string }) {
  const agentError = fieldError(error, `${at}agent`, ['UNKNOWN_AGENT', 'AGENT_NOT_INSTALLED', 'AGENT_REQUIRED']);
  const modeError = fieldError(error, `${at}mode`, ['MODE_UNSUPPORTED']);
  return (
    <>
      {noAgent(agents) ? <NoAgents agents={agents} /> : null}
      <Field label="Agent" name="agent" id={`${ids}agent`} error={agentError}>
        <select {...inputProps('agent', agentError, `${ids}agent`)}>
          {(agents ?? []).map((a) => (
            <option key={a.name} value={a.name} disabled={!a.available}>
              {a.name}
              {a.available ? '' : ' (not installed)'}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Mode" name="mode" id={`${ids}mode`} error={modeError}>
        <select {...inputProps('mode', modeError, `${ids}mode`)}>
          {MODES.map((m) => (
            <option key={m} selected={m === 'edit'}>
              {m}
            </option>
          ))}
        </select>
      </Field>
    </>
  );
}
