// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

// Every folder under src/ (test/architecture.test.ts checks that none is missing).
const parts = [
  'core',
  'tools',
  'policy',
  'approvals',
  'tenancy',
  'invocation',
  'secrets',
  'capacity',
  'egress',
  'sandbox',
  'executors',
  'mcp',
  'oauth',
  'audit',
  'storage',
  'http',
  'cli',
  'app',
];

/** Paths into a part from a file one to three folders deep under src/. */
const into = (part, rest) => ['../', '../../', '../../../'].map((up) => `${up}${part}${rest}`);

/** A part reaches another part only through its index.ts. */
const throughIndex = parts.map((p) => ({
  group: [...into(p, '/*'), ...into(p, '/index.js').map((path) => `!${path}`)],
  message: `Import another part only through its index.js (src/${p}/index.ts).`,
}));

/** Only the composition root chooses implementations: no other part imports storage/. */
const storageFromAppOnly = {
  group: [...into('storage', ''), ...into('storage', '/*')],
  message:
    'Only app/ imports storage/: declare the interface your part needs in the part, and let app/ wire the implementation.',
};

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      'dist-bench',
      'dist-all',
      'coverage',
      '.data',
      'studio/**/*.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'import-x/no-cycle': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: throughIndex }] },
  },
  {
    // The same rule again, with storage/ closed to every part but app/ (a later block replaces it).
    files: ['src/**/*.ts'],
    ignores: ['src/app/**', 'src/storage/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [...throughIndex, storageFromAppOnly] }],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
