// Which engines the end-to-end tests run on (E2E_ENGINES=chromium,firefox,webkit; all three by default), and
// starting one by name.
import { launchChromiumEngine } from './chromium';
import { ENGINE_NAMES, type Engine, type EngineName, type EngineOptions } from './engine';
import { launchFirefoxEngine } from './firefox';
import { launchWebKitEngine } from './webkit';

export * from './engine';

/** The engines of this run, in the order their suites run. */
export function enginesOfRun(env: string | undefined = process.env.E2E_ENGINES): EngineName[] {
  if (!env?.trim()) return [...ENGINE_NAMES];
  const asked = env
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const unknown = asked.filter((name) => !ENGINE_NAMES.includes(name as EngineName));
  if (unknown.length > 0)
    throw new Error(`E2E_ENGINES: unknown engine ${unknown.join(', ')} (known: ${ENGINE_NAMES.join(', ')})`);
  return ENGINE_NAMES.filter((name) => asked.includes(name));
}

/**
 * A name for this vitest process's own files (a Vite cache directory): two lanes may run the browser tests at once,
 * each on its engines, and each vitest process numbers its workers from 1.
 * @example laneKey() // 'chromium-1'
 */
export function laneKey(): string {
  return `${enginesOfRun().join('+')}-${process.env.VITEST_POOL_ID ?? '0'}`;
}

/** @example const engine = await launchEngine('webkit'); ...; await engine.close(); */
export function launchEngine(name: EngineName, options: EngineOptions = {}): Promise<Engine> {
  switch (name) {
    case 'chromium':
      return launchChromiumEngine(options);
    case 'firefox':
      return launchFirefoxEngine(options);
    case 'webkit':
      return launchWebKitEngine(options);
  }
}
