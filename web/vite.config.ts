// Builds the participant pages (join, call, feedback) into web/dist, served
// by the server under /assets/ (src/http/routes/web-assets.ts reads the manifest).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/assets/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // One small script and one stylesheet: no inline code (the pages' CSP allows 'self' only).
    modulePreload: false,
    assetsInlineLimit: 0,
    rollupOptions: {
      input: { call: fileURLToPath(new URL('./src/call.ts', import.meta.url)) },
      output: { entryFileNames: '[name]-[hash].js', assetFileNames: '[name]-[hash][extname]' },
    },
    manifest: true,
  },
});
