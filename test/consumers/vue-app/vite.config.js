// A Vue app as `npm create vite` makes it (the Vue template).
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

export default defineConfig({ plugins: [vue()] });
