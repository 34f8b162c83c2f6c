// Lint: TypeScript rules with type information where it matters (promises), the Temporal rule that
// workflow code stays deterministic, and the walls of the house: data flows one way,
//   api -> (Temporal) -> workflows -> activities -> engine / converter / connectors / store / security / telemetry,
// with core/ (the contracts) importable by all and importing nothing. An import against the flow is a lint
// error, not a comment (see ARCHITECTURE.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const NODE_BUILTINS = builtinModules.flatMap((m) => [m, `node:${m}`]);

const FOLDERS = [
  'api',
  'activities',
  'workflows',
  'worker',
  'cli',
  'client',
  'config',
  'core',
  'engine',
  'einvoice',
  'converter',
  'connectors',
  'store',
  'security',
  'telemetry',
  'bench',
  'scripts',
  'test',
  'examples',
];

/** Which other top-level folders each folder may import from; `types` may be imported as types only. */
const WALLS = {
  core: { allow: [] },
  engine: { allow: ['core'] },
  einvoice: { allow: ['core'] },
  converter: { allow: ['core', 'engine'] },
  store: { allow: ['core'] },
  security: { allow: ['core', 'store'] },
  telemetry: { allow: ['core'] },
  connectors: { allow: ['core', 'store', 'security'] },
  activities: { allow: ['core', 'engine', 'einvoice', 'converter', 'connectors', 'store', 'security', 'telemetry'] },
  workflows: { allow: ['core'], types: ['activities'] },
  worker: {
    allow: ['core', 'activities', 'engine', 'converter', 'connectors', 'store', 'security', 'telemetry', 'config'],
    types: ['workflows'],
  },
  api: { allow: ['core', 'engine', 'connectors', 'store', 'security', 'telemetry', 'config'], types: ['workflows'] },
  config: { allow: ['core', 'connectors', 'engine', 'converter'] },
  // The SDK is a package of its own (client/package.json): it imports nothing of the service, not even
  // types; its types are generated from the OpenAPI document (client/openapi.ts).
  client: { allow: [] },
};

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function wall(folder, { allow, types = [] }) {
  const forbidden = FOLDERS.filter((f) => f !== folder && !allow.includes(f) && !types.includes(f));
  const patterns = [
    {
      regex: `^(\\.\\./)+(${forbidden.map(escape).join('|')})(/|$)`,
      message: `${folder}/ may import only from ${[...allow, ...types.map((t) => `${t} (types)`)].join(', ') || 'itself'}: data flows api -> workflows -> activities -> engine/converter/connectors/store, core/ shared by all (ARCHITECTURE.md).`,
    },
  ];
  if (types.length > 0) {
    patterns.push({
      regex: `^(\\.\\./)+(${types.map(escape).join('|')})(/|$)`,
      allowTypeImports: true,
      message: `${folder}/ may import ${types.join(', ')} as types only (import type ...).`,
    });
  }
  return patterns;
}

const builtinPaths = (message) => NODE_BUILTINS.map((name) => ({ name, message }));

export default tseslint.config(
  { ignores: ['node_modules/**', '.docgen/**', 'coverage/**', 'client/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-control-regex': 'off',
    },
  },
  // The walls, one block per folder (a later block for the same files would replace the rule, so the
  // deterministic-code rules of workflows/ and core/ are merged into theirs).
  ...Object.entries(WALLS).map(([folder, spec]) => {
    const patterns = wall(folder, spec);
    if (folder === 'workflows') {
      patterns.push({
        group: ['../activities/*', '!../activities/index.ts'],
        message: 'Import activities as types via activities/index.ts.',
      });
    }
    const paths =
      folder === 'workflows'
        ? builtinPaths('Workflow code must be deterministic: no Node built-ins (use activities).')
        : folder === 'core'
          ? builtinPaths('core/ is shared with workflow code: no Node built-ins.')
          : folder === 'einvoice'
            ? builtinPaths('einvoice/ is pure (the model, its rules, the XML): no Node built-ins.')
            : [];
    return {
      files: [`${folder}/**/*.ts`],
      rules: {
        '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }],
        ...(folder === 'workflows' ? { '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports' }] } : {}),
      },
    };
  }),
  // Route handlers are typed from their schemas (FastifyPluginAsyncTypebox): a cast of request.body,
  // .params or .query would silently disagree with the schema that validated it.
  {
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            ':matches(TSAsExpression:not([typeAnnotation.typeName.name="const"]), TSTypeAssertion) MemberExpression[object.name="request"][property.name=/^(body|params|query)$/]',
          message: 'request.body, .params and .query are typed by the route schema (FastifyPluginAsyncTypebox, api/schemas/): no cast.',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  // The studio's page scripts run in the browser (plain modules, no build step: api/routes/studio.ts).
  {
    files: ['studio/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'navigator',
          'fetch',
          'FormData',
          'Blob',
          'URL',
          'Option',
          'performance',
          'setTimeout',
          'clearTimeout',
          'console',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
);
