// The host switcher (DESIGN §14.1): this machine, then each saved SSH host, greyed with the
// reason when its daemon cannot be reached. Choosing one loads the page anew on that host (the
// address's `?host=`), so a reload stays there. The team's hosts (§14.2) are not listed: on a
// shared store their projects and tasks are on this machine's board already.
import type { Host, SshHost } from '../../schemas/host.ts';
import { HOST, hostHref, localApi, messageOf } from './api.ts';
import { useLoad } from './hooks.ts';

export function HostSwitcher() {
  // Always this machine's list, whichever host the page shows.
  const { value } = useLoad(() => localApi<Host[]>('GET', '/api/hosts'), []);
  const ssh = (value ?? []).filter((h): h is SshHost => h.kind === 'ssh');
  if (HOST === null && ssh.length === 0) return null;
  // A host named by the address but no longer saved is still shown, as what the page is on.
  const shown = value && HOST !== null && !ssh.some((h) => h.name === HOST) ? [...ssh, { kind: 'ssh' as const, name: HOST, url: '', reachable: false, version: null }] : ssh;
  return (
    <nav class="hosts" aria-label="Hosts">
      <ul>
        <li>
          <a href={hostHref(null)} aria-current={HOST === null ? 'page' : undefined} data-host="">
            This machine
          </a>
        </li>
        {shown.map((h) => (
          <li key={h.name}>{h.reachable ? <HostLink host={h} /> : <Unreachable host={h} />}</li>
        ))}
      </ul>
    </nav>
  );
}

function HostLink({ host }: { host: SshHost }) {
  return (
    <a href={hostHref(host.name)} aria-current={HOST === host.name ? 'page' : undefined} data-host={host.name} title={`${host.url} · grove ${host.version}`}>
      {host.name}
    </a>
  );
}

// Why a host is not reachable: what this machine's forward answers for it (ssh's own message).
// The host the page is on stays a link, to load it again.
function Unreachable({ host }: { host: SshHost }) {
  const { value, error } = useLoad(() => localApi('GET', `/api/hosts/${encodeURIComponent(host.name)}/api/health`), [host.name]);
  const reason = error ? messageOf(error) : value ? 'it answers now: reload the page' : 'not reachable';
  const body = (
    <>
      {host.name}
      <span class="reason small">{reason}</span>
    </>
  );
  return HOST === host.name ? (
    <a href={hostHref(host.name)} class="unreachable" aria-current="page" data-host={host.name} title={reason}>
      {body}
    </a>
  ) : (
    <span class="unreachable" aria-disabled="true" data-host={host.name} title={reason}>
      {body}
    </span>
  );
}
