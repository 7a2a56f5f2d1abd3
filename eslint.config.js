// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

const parts = [
  'core',
  'tools',
  'policy',
  'approvals',
  'invocation',
  'secrets',
  'capacity',
  'egress',
  'sandbox',
  'executors',
  'mcp',
  'audit',
  'storage',
  'http',
  'cli',
  'app',
];

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
    // A part reaches another part only through its index.ts; core imports no part.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: parts.map((p) => ({
            group: [`../${p}/*`, `../../${p}/*`, `!../${p}/index.js`, `!../../${p}/index.js`],
            message: `Import another part only through its index.js (src/${p}/index.ts).`,
          })),
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
