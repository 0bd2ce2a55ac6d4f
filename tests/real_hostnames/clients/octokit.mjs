// A client agent for real hostnames: @octokit/rest with only a token (its default baseUrl,
// https://api.github.com) reads issue #3 of acme/orders and comments on it.
//
// @octokit/rest comes from the folder NODE_PATH names (node_clients.node_modules()): an ES
// module's `import` ignores NODE_PATH, so it is loaded through createRequire, whose require
// honours it (and loads an ES module package on Node 20.19 and later).
import { createRequire } from "node:module";

const ISSUE = 3;

async function main() {
  const token = process.env.ANCHA_GITHUB_TOKEN;
  if (!token) throw new Error("ANCHA_GITHUB_TOKEN is not set");
  const { Octokit } = createRequire(import.meta.url)("@octokit/rest");
  const octokit = new Octokit({ auth: token });
  const where = { owner: "acme", repo: "orders", issue_number: ISSUE };
  const { data: issue } = await octokit.rest.issues.get(where);
  const { data: comment } = await octokit.rest.issues.createComment({
    ...where, body: `Octokit read ${JSON.stringify(issue.title)} at api.github.com`,
  });
  console.log(`octokit: read issue #${issue.number} (${JSON.stringify(issue.title)}), commented ${comment.html_url}`);
}

main().catch((error) => {
  console.error(`octokit: ${error.stack || error}`);
  process.exit(1);
});
