// Structured one-line JSON logs on stderr, from LOG_LEVEL (config.logLevel) up. Never pass
// secrets (keys, webhook secrets) here.
import { config } from "./config";

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof levels;
const threshold = levels[config.logLevel as Level] ?? 20;

function write(level: Level, msg: string, fields?: Record<string, unknown>) {
  if (levels[level] < threshold) return;
  const line = JSON.stringify({ t: new Date().toISOString(), level, pid: process.pid, msg, ...fields });
  process.stderr.write(line + "\n");
}

export const log = {
  debug: (msg: string, f?: Record<string, unknown>) => write("debug", msg, f),
  info: (msg: string, f?: Record<string, unknown>) => write("info", msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => write("warn", msg, f),
  error: (msg: string, f?: Record<string, unknown>) => write("error", msg, f),
};
