import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'jsdom',
    setupFiles: ['test/setup.ts'],
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // ESM packages with extensionless imports: let vite resolve them instead of Node
    server: { deps: { inline: [/@jupyter\/web-components/, /@jupyter\/react-components/, /@microsoft\/fast-/] } }
  }
});
