// Builds <parley-room> (web/src/embed/parley-room.ts) into web/dist/embed/embed.js,
// served as {PUBLIC_URL}/embed.js (src/http/routes/embed.routes.ts). Apart from
// the pages' build (vite.config.ts), and after it (that one empties web/dist):
// one file with no imports, for integrators' pages, under 5 kB gzip
// (test/api/embed-script.test.ts checks both).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  build: {
    outDir: 'dist/embed',
    emptyOutDir: true,
    target: 'es2022',
    lib: {
      entry: fileURLToPath(new URL('./src/embed/parley-room.ts', import.meta.url)),
      formats: ['es'],
      fileName: () => 'embed.js',
    },
    // Vite keeps an ES library's whitespace (for the integrator's own bundler); this file goes to browsers as it is.
    rolldownOptions: { output: { minify: true } },
  },
});
