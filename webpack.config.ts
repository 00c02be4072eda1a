/*
 * Extends the scaffold's webpack config (.config/webpack/webpack.config.ts) the way create-plugin documents:
 * https://grafana.com/developers/plugin-tools/how-to-guides/extend-configurations#extend-the-webpack-config
 *
 * Only one change: the scaffold copies ../LICENSE, ../CHANGELOG.md and ../README.md into dist/ and fails the
 * build when one of them is missing. Those files belong to the repository (not to the frontend), so a frontend
 * build must not depend on whether they have been written yet: copy them when present, skip them otherwise.
 *
 * It also copies the repository's dashboards/ into dist/dashboards/, where plugin.json's "includes" point, so
 * the dashboards appear on the data source's Dashboards tab (one copy of each dashboard, kept at the top level).
 */
import CopyWebpackPlugin from 'copy-webpack-plugin';
import type { Configuration } from 'webpack';

import grafanaConfig, { type Env } from './.config/webpack/webpack.config.ts';
import { copyFilePatterns } from './.config/bundler/copyFiles.ts';

const OPTIONAL_REPO_FILES = /^\.\.\/(LICENSE|CHANGELOG\.md|README\.md)$/;

const config = async (env: Env): Promise<Configuration> => {
  const base = await grafanaConfig(env);
  const patterns = [
    ...copyFilePatterns.map((p) =>
      typeof p.from === 'string' && OPTIONAL_REPO_FILES.test(p.from) ? { ...p, noErrorOnMissing: true } : p
    ),
    { from: '../dashboards/*.json', to: 'dashboards/[name][ext]' },
  ];
  return {
    ...base,
    plugins: (base.plugins ?? []).map((plugin) =>
      plugin instanceof CopyWebpackPlugin ? new CopyWebpackPlugin({ patterns }) : plugin
    ),
  };
};

export default config;
