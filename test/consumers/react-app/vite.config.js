// A React app as `npm create vite` makes it, plus the user's vitest settings (jsdom).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  test: { environment: 'jsdom', include: ['src/**/*.test.jsx'] },
});
