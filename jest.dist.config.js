// Jest config for the tests that need the production build: they import dist/module.js, so they run after
// `npm run build` (npm run test:dist; scripts/frontend-check.sh orders it), never in the unit-test run.
const base = require('./jest.config');

module.exports = {
  ...base,
  testMatch: ['<rootDir>/e2e/**/*.test.{ts,tsx}'],
};
