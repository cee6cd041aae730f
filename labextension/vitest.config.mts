import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'jsdom',
    setupFiles: ['test/setup.ts'],
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // ESM packages with extensionless imports: let vite resolve them instead of Node
    server: { deps: { inline: [/@jupyter\/web-components/, /@jupyter\/react-components/, /@microsoft\/fast-/] } },
    coverage: {
      provider: 'v8',
      include: ['src/**/*.{ts,tsx}'],
      // generated types only: no statements to run
      exclude: ['src/schema.ts'],
      reporter: ['text-summary', 'text'],
      thresholds: { statements: 80 }
    }
  }
});
