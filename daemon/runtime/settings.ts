import { readFileSync } from 'node:fs';
import { UserConfig } from '../../schemas/config.ts';
import { compile, createAjv } from './validation.ts';
import { nonEmpty, resolvePaths } from './paths.ts';
import { asLogLevel, LOG_LEVELS, type LogLevel } from './log.ts';



export const DEFAULT_PORT = 7433;
export const DEFAULT_PORT_RANGE: [number, number] = [20000, 29999];
export const DEFAULT_SETUP_TIMEOUT_S = 600;
export const DEFAULT_GIT_TIMEOUT_S = 120;

// Everything the daemon needs to know before it starts, resolved once from env + config.
export interface Settings {
  configFile: string;
  dataDir: string;
  socketPath: string;
  /** null: no TCP front; 0: any free port. */
  port: number | null;
  logLevel: LogLevel;
  config: UserConfig;
  portRange: [number, number];
  setupTimeoutS: number;
  /** the bound of review and landing git but a commit's */
  gitTimeoutS: number;
  /** GROVE_EVENT_STALL_MS; undefined: the feed's default */
  eventStallMs: number | undefined;
  /** GROVE_DATABASE_URL, else the config's database_url: the PostgreSQL store; null: PGlite */
  databaseUrl: string | null;
}

// A setting that cannot be used: the message names the variable or file and the field.
export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

// Reads and validates the user config; a missing file is an empty config. Whether default_agent
// names an agent is for agents/agents.ts' agentsOf to say: runtime/ does not know the agents.
export function loadUserConfig(file: string): UserConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new SettingsError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(`config file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const validate = compile(createAjv(), UserConfig);
  if (!validate(value)) {
    const issues = validate.issues().map((i) => `${i.path} ${i.message}`);
    throw new SettingsError(`config file ${file} is invalid: ${issues.join('; ')}`);
  }
  const range = value.port_range;
  if (range && range[0] > range[1]) {
    throw new SettingsError(`config file ${file} is invalid: /port_range must be [from, to] with from <= to`);
  }
  return value;
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? 0): Settings {
  const paths = resolvePaths(env, uid);
  const config = loadUserConfig(paths.configFile);
  return {
    ...paths,
    port: resolvePort(env.GROVE_PORT, config.port),
    logLevel: resolveLogLevel(env.GROVE_LOG_LEVEL),
    config,
    portRange: config.port_range ?? DEFAULT_PORT_RANGE,
    setupTimeoutS: config.setup_timeout_s ?? DEFAULT_SETUP_TIMEOUT_S,
    gitTimeoutS: config.git_timeout_s ?? DEFAULT_GIT_TIMEOUT_S,
    // How long an event stream's client may take nothing before it is dropped (tests shorten it).
    eventStallMs: positiveInt(env.GROVE_EVENT_STALL_MS) ?? undefined,
    databaseUrl: resolveDatabaseUrl(env.GROVE_DATABASE_URL, config.database_url),
  };
}

function positiveInt(raw: string | undefined): number | null {
  return raw !== undefined && /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : null;
}

function resolvePort(envValue: string | undefined, configValue: UserConfig['port']): number | null {
  const raw = nonEmpty(envValue);
  if (raw !== undefined) {
    if (raw === 'off') return null;
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
      throw new SettingsError(`GROVE_PORT must be a port number 0-65535 or "off", got ${JSON.stringify(raw)}`);
    }
    return Number(raw);
  }
  if (configValue === 'off') return null;
  if (configValue !== undefined) return configValue;
  return DEFAULT_PORT;
}

// The variable wins over the file. Its value is never echoed: it may hold a password.
function resolveDatabaseUrl(envValue: string | undefined, configValue: string | undefined): string | null {
  const raw = nonEmpty(envValue);
  if (raw === undefined) return configValue ?? null;
  let ok = false;
  try {
    ok = ['postgres:', 'postgresql:'].includes(new URL(raw).protocol);
  } catch {
    // not a URL
  }
  if (!ok) throw new SettingsError('GROVE_DATABASE_URL must be a postgres:// or postgresql:// URL');
  return raw;
}

function resolveLogLevel(raw: string | undefined): LogLevel {
  const v = nonEmpty(raw);
  if (v === undefined) return 'info';
  const level = asLogLevel(v);
  if (level) return level;
  throw new SettingsError(`GROVE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(v)}`);
}
