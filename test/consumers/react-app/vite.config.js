// A React app as `npm create vite` makes it, plus the user's vitest settings (jsdom). expect.poll waits up to 10 s
// (default 1 s): the test command runs this suite beside the browser tests on 2 cores, where a first answer through
// MSW and fake-indexeddb has taken longer than a second.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  test: { environment: 'jsdom', include: ['src/**/*.test.jsx'], expect: { poll: { timeout: 10_000 } } },
});
