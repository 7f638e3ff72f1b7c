// Validates AsyncAPI documents with the pinned @asyncapi/parser (make api-lint): the document
// against the AsyncAPI 3 specification and its rules, with the OpenAPI 3.0 payload schemas
// parsed by @asyncapi/openapi-schema-parser and their references to ./openapi.yaml resolved.
// Any error or warning fails (exit 1), as Redocly's recommended-strict does for the HTTP API.
// Usage: node tools/npm/asyncapi-validate.mjs api/gateway.asyncapi.yaml
import { Parser, fromFile } from '@asyncapi/parser';
import { OpenAPISchemaParser } from '@asyncapi/openapi-schema-parser';
import path from 'node:path';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node asyncapi-validate.mjs <document>...');
  process.exit(2);
}
const parser = new Parser({ schemaParsers: [OpenAPISchemaParser()] });
const severities = ['error', 'warning', 'information', 'hint'];
let failed = false;
for (const file of files) {
  const { document, diagnostics } = await fromFile(parser, path.resolve(file)).parse();
  const findings = diagnostics.filter((d) => d.severity <= 1);
  for (const d of diagnostics) {
    const where = d.range ? `${d.range.start.line + 1}:${d.range.start.character + 1}` : '';
    console.log(`${file}:${where} ${severities[d.severity]} ${d.code} ${d.message} (${(d.path || []).join('.')})`);
  }
  if (document === undefined || findings.length > 0) {
    failed = true;
    console.log(`${file}: invalid (${findings.length} errors or warnings)`);
  } else {
    const messages = document.allMessages().length;
    console.log(`${file}: valid AsyncAPI ${document.version()}, ${messages} messages`);
  }
}
process.exit(failed ? 1 : 0);
