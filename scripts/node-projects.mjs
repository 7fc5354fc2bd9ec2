// The vitest projects that run in Node in the test process (vitest.config.ts): each package's tests, named after its
// folder, and the root's own (`workspace`). The node lane of scripts/test-lanes.mjs and scripts/test-quick.mjs run
// them together.
export const NODE_PROJECTS = ['shop-lookup', 'relay', 'mock-server', 'shop-api', 'workspace'];

/** `--project <name>` for each of them, as vitest's arguments. */
export const nodeProjectArgs = () => NODE_PROJECTS.flatMap((name) => ['--project', name]);
