// Drives one Evergreen MCP endpoint with an official TypeScript SDK and prints what it saw as JSON.
//
//   node exercise.mjs <sdk1|client2> <legacy|auto> <endpoint URL> [bearer key]
//
// sdk1 is @modelcontextprotocol/sdk 1.x (the 2025 handshake era only); client2 is
// @modelcontextprotocol/client 2.x, whose `auto` mode negotiates the 2026-07-28 era through
// server/discover. The SDKs validate every result against their own schemas (zod) and every
// structuredContent against the tool's outputSchema (AJV), so a result they reject surfaces as an
// error here. The script only calls and records; tests/mcp_bridge/test_typescript_sdk.py asserts.
import { readFileSync } from 'node:fs';

const [sdkName, mode, endpoint, bearer] = process.argv.slice(2);
const FEEDBACK_MESSAGE = `EG-202 could name the budget header (${sdkName} ${mode}).`;

async function loadSdk(name) {
    if (name === 'sdk1') {
        const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
        const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
        return { Client, StreamableHTTPClientTransport, pkg: '@modelcontextprotocol/sdk' };
    }
    if (name === 'client2') {
        const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
        return { Client, StreamableHTTPClientTransport, pkg: '@modelcontextprotocol/client' };
    }
    throw new Error(`unknown SDK ${name}`);
}

function installedVersion(pkg) {
    const url = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
    return JSON.parse(readFileSync(url, 'utf8')).version;
}

/** A thrown SDK error as data: its JSON-RPC code when it has one, and its message. */
function failure(error) {
    return { error: { code: typeof error?.code === 'number' ? error.code : null, message: String(error?.message ?? error) } };
}

async function attempt(call) {
    try {
        return await call();
    } catch (error) {
        return failure(error);
    }
}

async function main() {
    const sdk = await loadSdk(sdkName);
    const options = mode === 'legacy' && sdkName === 'sdk1' ? {} : { versionNegotiation: { mode } };
    const client = new sdk.Client({ name: `evergreen-tests-${sdkName}`, version: '1.0.0' }, options);
    const requestInit = bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : undefined;
    await client.connect(new sdk.StreamableHTTPClientTransport(new URL(endpoint), { requestInit }));

    const report = {
        package: sdk.pkg,
        version: installedVersion(sdk.pkg),
        protocolVersion: client.getNegotiatedProtocolVersion?.() ?? client.transport?.protocolVersion ?? null,
        server: client.getServerVersion(),
        instructions: client.getInstructions() ?? null,
    };

    const tools = await client.listTools();
    report.tools = tools.tools;
    report.calls = {
        search_context: await attempt(() => client.callTool({ name: 'search_context', arguments: { query: 'token 预算' } })),
        search_context_capped: await attempt(() =>
            client.callTool({ name: 'search_context', arguments: { query: 'token', budget: 100000, limit: 2 } }),
        ),
        search_context_invalid: await attempt(() =>
            client.callTool({ name: 'search_context', arguments: { query: 'token', budget: 'lots' } }),
        ),
        get_entry: await attempt(() => client.callTool({ name: 'get_entry', arguments: { id: 'eg-202' } })),
        get_entry_gone: await attempt(() => client.callTool({ name: 'get_entry', arguments: { id: 'EG-003' } })),
        get_entry_missing: await attempt(() => client.callTool({ name: 'get_entry', arguments: { id: 'EG-999' } })),
        get_entry_several: await attempt(() =>
            client.callTool({ name: 'get_entry', arguments: { ids: ['EG-202', 'EG-003', 'EG-999'] } }),
        ),
        get_prompt_pack: await attempt(() => client.callTool({ name: 'get_prompt_pack', arguments: { scenario: 'coding' } })),
        get_metrics: await attempt(() => client.callTool({ name: 'get_metrics', arguments: {} })),
        submit_feedback: await attempt(() =>
            client.callTool({
                name: 'submit_feedback',
                arguments: { entryId: 'EG-202', query: 'token budget', kind: 'missing', message: FEEDBACK_MESSAGE },
            }),
        ),
        verify_citations: await attempt(() =>
            client.callTool({ name: 'verify_citations', arguments: { answer: 'Budgets [EG-202]. Retired [EG-003].' } }),
        ),
        explain_context: await attempt(() =>
            client.callTool({ name: 'explain_context', arguments: { query: 'token 预算', ids: ['EG-202', 'EG-003'] } }),
        ),
    };

    const pages = [];
    let cursor;
    do {
        const page = await client.listResources(cursor ? { cursor } : {});
        pages.push(page);
        cursor = page.nextCursor;
    } while (cursor);
    report.resourcePages = pages;
    report.resourceTemplates = await attempt(() => client.listResourceTemplates());
    report.reads = {};
    for (const page of pages) {
        for (const resource of page.resources) {
            report.reads[resource.uri] = await attempt(() => client.readResource({ uri: resource.uri }));
        }
    }
    const namespace = new URL(endpoint).pathname.split('/')[2] ?? 'evergreen';
    report.readGone = await attempt(() => client.readResource({ uri: `evergreen://${namespace}/EG-003` }));

    const prompts = await client.listPrompts();
    report.prompts = prompts.prompts;
    report.promptGets = {};
    for (const prompt of prompts.prompts) {
        report.promptGets[prompt.name] = await attempt(() => client.getPrompt({ name: prompt.name }));
    }
    report.promptUnknown = await attempt(() => client.getPrompt({ name: 'poetry' }));

    await client.close();
    process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch(error => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
});
