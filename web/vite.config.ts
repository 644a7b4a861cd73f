// Builds the participant pages (join, call, feedback) into web/dist, served by the server.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/assets/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: { input: { call: fileURLToPath(new URL('./src/call.ts', import.meta.url)) }, output: { entryFileNames: '[name]-[hash].js', assetFileNames: '[name]-[hash][extname]' } },
    manifest: true,
  },
});
