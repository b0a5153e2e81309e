#!/usr/bin/env node
// End-to-end test of the `strata explore` page in headless Chromium.
//
//   node explore.test.mjs BASE_URL MANPAGE_PATH
//
// BASE_URL: a running `strata explore --model RUN --compare RUN2 --root DIR` (two runs);
// MANPAGE_PATH: a man page under DIR with a NAME section, as the server should be asked for it.
// Prints one TAP-like line per check ("ok - ..." / "not ok - ...: detail"); exits 1 if any
// failed, 77 (skip) if Chromium or playwright-core is missing, 2 on a usage error.
import zlib from 'node:zlib';
import fs from 'node:fs/promises';

const TIMEOUT = 30_000;  // per wait: the server computes on few cores
const CHROMIUM = '/usr/bin/chromium';

const [baseArg, manpage] = process.argv.slice(2);
if (!baseArg || !manpage) {
  console.error('usage: node explore.test.mjs BASE_URL MANPAGE_PATH');
  process.exit(2);
}
const BASE = baseArg.replace(/\/+$/, '');

// ---------------------------------------------------------------------------------------------
// Reporting

class Skip extends Error {}
let failures = 0;
const met = new Set();  // prerequisites established so far: 'page', 'document'

// Runs one check. `needs` names prerequisites that earlier checks establish (`gives`): without
// them the check fails at once instead of waiting out its timeouts.
async function check(name, body, { needs = [], gives = null } = {}) {
  const missing = needs.filter((n) => !met.has(n));
  if (missing.length) {
    failures += 1;
    console.log(`not ok - ${name}: not run, no ${missing.join(', ')} (an earlier check failed)`);
    return;
  }
  try {
    const note = await body();
    if (gives) met.add(gives);
    console.log(`ok - ${name}${note ? ` (${note})` : ''}`);
  } catch (e) {
    if (e instanceof Skip) {
      console.log(`ok - ${name} # SKIP ${e.message}`);
      return;
    }
    failures += 1;
    console.log(`not ok - ${name}: ${String(e?.message ?? e).split('\n')[0]}`);
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

// ---------------------------------------------------------------------------------------------
// A small PNG decoder (8-bit greyscale, grey+alpha, RGB or RGBA, not interlaced): enough for
// Chromium's screenshots. Returns {width, height, channels, pixels} with the filters undone.

function decodePng(buffer) {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert(buffer.subarray(0, 8).equals(signature), 'not a PNG');
  let offset = 8, header = null;
  const data = [];
  while (offset < buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString('latin1', offset + 4, offset + 8);
    const chunk = buffer.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      header = {
        width: chunk.readUInt32BE(0), height: chunk.readUInt32BE(4), depth: chunk[8], colour: chunk[9], interlace: chunk[12],
      };
    } else if (type === 'IDAT') data.push(chunk);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  assert(header, 'PNG without IHDR');
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[header.colour];
  assert(header.depth === 8 && channels && header.interlace === 0,
    `PNG kind not handled: depth ${header.depth}, colour type ${header.colour}, interlace ${header.interlace}`);
  const raw = zlib.inflateSync(Buffer.concat(data));
  const { width, height } = header;
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? pixels[y * stride + x - channels] : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const upLeft = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let predictor;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = left; break;
        case 2: predictor = up; break;
        case 3: predictor = (left + up) >> 1; break;
        case 4: {
          const p = left + up - upLeft;
          const pa = Math.abs(p - left), pb = Math.abs(p - up), pc = Math.abs(p - upLeft);
          predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
          break;
        }
        default: throw new Error(`PNG filter type ${filter} on line ${y}`);
      }
      pixels[y * stride + x] = (line[x] + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

function colourCensus({ width, height, channels, pixels }) {
  const colours = new Set();
  let nonWhite = 0;
  for (let i = 0; i < width * height; i++) {
    const p = pixels.subarray(i * channels, (i + 1) * channels);
    const [r, g, b] = channels >= 3 ? [p[0], p[1], p[2]] : [p[0], p[0], p[0]];
    colours.add((r << 16) | (g << 8) | b);
    if (r < 250 || g < 250 || b < 250) nonWhite += 1;
  }
  return { nonWhite: nonWhite / (width * height), distinct: colours.size };
}

// ---------------------------------------------------------------------------------------------
// Page helpers

const heatmap = (run) => `canvas.heatmap[data-run="${run}"]`;

async function waitReady(page) {
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: TIMEOUT });
}

function hashParams(page) {
  return new URLSearchParams(new URL(page.url()).hash.slice(1));
}

async function canvasUrl(page, run) {
  return page.$eval(heatmap(run), (canvas) => canvas.toDataURL());
}

// Share of non-white pixels and number of distinct colours, read in the page.
async function canvasCensus(page, run) {
  return page.$eval(heatmap(run), (canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const colours = new Set();
    let nonWhite = 0;
    for (let i = 0; i < data.length; i += 4) {
      colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      if (data[i] < 250 || data[i + 1] < 250 || data[i + 2] < 250) nonWhite += 1;
    }
    return { nonWhite: nonWhite / (data.length / 4), distinct: colours.size, width: canvas.width, height: canvas.height };
  });
}

async function sectionHeadings(page) {
  return page.$$eval('#sections [data-section]', (buttons) => buttons.map((b) => b.textContent.trim()));
}

async function errorText(page) {
  return page.$eval('#error', (e) => (e.hidden ? '' : e.textContent.trim()));
}

// The attention view the page shows for run a, asked of the API directly.
async function apiView(page, run = 'a') {
  const hash = hashParams(page);
  const params = new URLSearchParams({ run, doc: hash.get('doc'), layer: hash.get('layer'), head: hash.get('head'), max: '256' });
  for (const key of ['q0', 'q1', 'k0', 'k1']) if (hash.has(key)) params.set(key, hash.get(key));
  const response = await fetch(`${BASE}/api/attention?${params}`);
  assert(response.ok, `GET /api/attention?${params}: ${response.status}`);
  return response.json();
}

async function downloadOf(page, buttonSelector) {
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: TIMEOUT }),
    page.click(buttonSelector),
  ]);
  const file = await download.path();
  return { name: download.suggestedFilename(), bytes: await fs.readFile(file) };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    console.log(`skip: playwright-core is not installed (npm ci in tests/explore/browser): ${e.message.split('\n')[0]}`);
    process.exit(77);
  }
  let browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true, timeout: TIMEOUT });
  } catch (e) {
    console.log(`skip: chromium cannot start: ${String(e.message).split('\n')[0]}`);
    process.exit(77);
  }

  const pageErrors = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (message) => {
      if (message.type() === 'error') console.log(`# console: ${message.text()}`);
    });

    await check('the page loads and lists two runs', async () => {
      await page.goto(`${BASE}/`, { timeout: TIMEOUT });
      await waitReady(page);
      const runs = await page.$$eval('#runs [data-run]', (items) => items.map((i) => i.dataset.run));
      assert(runs.length === 2, `runs listed: ${JSON.stringify(runs)}`);
      assert(await page.locator(heatmap('b')).count() === 1, 'no panel for run b');
      return runs.join(', ');
    }, { gives: 'page' });

    await check('a man page loaded by server path shows a NAME section and a heatmap', async () => {
      await page.fill('#path', manpage);
      await page.click('#load-path');
      await waitReady(page);
      const error = await errorText(page);
      assert(!error, `error shown: ${error}`);
      const headings = await sectionHeadings(page);
      assert(headings.includes('NAME'), `sections: ${JSON.stringify(headings)}`);
      const census = await canvasCensus(page, 'a');
      assert(census.nonWhite > 0, 'the heatmap of run a is blank');
      return `${headings.length} sections`;
    }, { needs: ['page'], gives: 'document' });

    await check('layer 0, head 1 re-renders and is kept in the address', async () => {
      const before = await canvasUrl(page, 'a');
      await page.selectOption('#layer', '0');
      await waitReady(page);
      await page.selectOption('#head', '1');
      await waitReady(page);
      const hash = hashParams(page);
      assert(hash.get('layer') === '0' && hash.get('head') === '1', `hash: ${hash}`);
      assert(await canvasUrl(page, 'a') !== before, 'the heatmap did not change');
    }, { needs: ['page', 'document'] });

    let view = null;  // the API's answer for the view shown, kept for the mask check
    await check('the tooltip shows the weight the API gives for the hovered cell', async () => {
      // Aim at the middle of the largest cell of a row two fifths down, so that the weight
      // read is not a zero; the cell is then found again from the tooltip's own ranges.
      view = await apiView(page);
      const row = Math.floor(view.values.length * 0.4);
      const col = view.values[row].indexOf(Math.max(...view.values[row]));
      const box = await page.locator(heatmap('a')).boundingBox();
      const at = (edges, i, lo, hi, size) => (((edges[i] + edges[i + 1]) / 2 - lo) / (hi - lo)) * size;
      await page.mouse.move(box.x + at(view.col_edges, col, view.k0, view.k1, box.width),
        box.y + at(view.row_edges, row, view.q0, view.q1, box.height));
      await page.waitForSelector('#tooltip:not([hidden])', { timeout: TIMEOUT });
      const text = await page.textContent('#tooltip');
      const queryMatch = /^query (\d+)–(\d+) /m.exec(text);
      const keyMatch = /^key (\d+)–(\d+) /m.exec(text);
      const weightMatch = /^(mean weight|weight) (-?\d+\.\d{6})$/m.exec(text);
      assert(queryMatch && keyMatch && weightMatch, `tooltip: ${JSON.stringify(text)}`);
      const r = view.row_edges.findIndex((e, i) => e === Number(queryMatch[1]) && view.row_edges[i + 1] === Number(queryMatch[2]));
      const c = view.col_edges.findIndex((e, i) => e === Number(keyMatch[1]) && view.col_edges[i + 1] === Number(keyMatch[2]));
      assert(r >= 0 && c >= 0, `no cell for query ${queryMatch[1]}–${queryMatch[2]}, key ${keyMatch[1]}–${keyMatch[2]}`);
      const shown = Number(weightMatch[2]);
      const expected = view.values[r][c];
      assert(Math.abs(shown - expected) <= 5e-7 + 1e-6, `tooltip ${shown}, API ${expected}`);
      await page.mouse.move(0, 0);
      return `cell ${r},${c}: ${weightMatch[1]} ${weightMatch[2]}`;
    }, { needs: ['page', 'document'] });

    await check('toggling the mask overlay changes the heatmap', async () => {
      assert(view, 'no view from the previous check');
      const hidden = view.visible.some((row) => row.some((v) => v < 1));
      const before = await canvasUrl(page, 'a');
      await page.setChecked('#overlay-mask', !(await page.isChecked('#overlay-mask')));
      await waitReady(page);
      const after = await canvasUrl(page, 'a');
      if (!hidden) {
        assert(after === before, 'the view hides no pair, yet the mask overlay changed it');
        throw new Skip('the view hides no pair (a dense head)');
      }
      assert(after !== before, 'the heatmap did not change');
    }, { needs: ['page', 'document'] });

    await check('both run panels render and the second is not blank', async () => {
      const a = await canvasCensus(page, 'a');
      const b = await canvasCensus(page, 'b');
      const message = await page.$eval(`${heatmap('b')}`, (c) => c.closest('.panel').querySelector('.panel-message').textContent);
      assert(!message, `run b: ${message}`);
      assert(a.nonWhite > 0.01 && a.distinct >= 2, `run a: ${JSON.stringify(a)}`);
      assert(b.nonWhite > 0.01 && b.distinct >= 2, `run b: ${JSON.stringify(b)}`);
      return `a ${(100 * a.nonWhite).toFixed(0)}% coloured, b ${(100 * b.nonWhite).toFixed(0)}%`;
    }, { needs: ['page', 'document'] });

    await check('the PNG export is a PNG of the canvas size', async () => {
      const { width, height } = await canvasCensus(page, 'a');
      const { name, bytes } = await downloadOf(page, '#export-png');
      const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      assert(bytes.subarray(0, 8).equals(signature), 'no PNG signature');
      assert(bytes.toString('latin1', 12, 16) === 'IHDR', 'no IHDR first');
      const [w, h] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
      assert(w === width && h === height, `IHDR ${w}×${h}, canvas ${width}×${height}`);
      assert(name === 'attention-a-L0-H1.png', `file name ${name}`);
      return `${name}, ${w}×${h}`;
    }, { needs: ['page', 'document'] });

    await check('the SVG export parses as SVG with rectangles', async () => {
      const { name, bytes } = await downloadOf(page, '#export-svg');
      const text = bytes.toString('utf8');
      assert(text.includes('<rect'), 'no <rect');
      const parsed = await page.evaluate((source) => {
        const doc = new DOMParser().parseFromString(source, 'image/svg+xml');
        return {
          error: doc.querySelector('parsererror')?.textContent ?? null,
          root: doc.documentElement.localName,
          rects: doc.getElementsByTagName('rect').length,
        };
      }, text);
      assert(!parsed.error, `parse error: ${parsed.error}`);
      assert(parsed.root === 'svg' && parsed.rects >= 1, `root <${parsed.root}>, ${parsed.rects} rects`);
      assert(name === 'attention-a-L0-H1.svg', `file name ${name}`);
      return `${name}, ${parsed.rects} rects`;
    }, { needs: ['page', 'document'] });

    await check('a screenshot of the heatmap is not blank', async () => {
      const png = decodePng(await page.locator(heatmap('a')).screenshot());
      const { nonWhite, distinct } = colourCensus(png);
      assert(nonWhite >= 0.05, `${(100 * nonWhite).toFixed(1)}% non-white pixels`);
      assert(distinct >= 8, `${distinct} colours`);
      return `${(100 * nonWhite).toFixed(0)}% non-white, ${distinct} colours`;
    }, { needs: ['page', 'document'] });

    await check('reloading the address restores layer, head and document', async () => {
      const hash = hashParams(page);
      const mask = await page.isChecked('#overlay-mask');
      await page.reload({ timeout: TIMEOUT });
      await waitReady(page);
      const error = await errorText(page);
      assert(!error, `error shown: ${error}`);
      assert(await page.inputValue('#layer') === '0', `layer ${await page.inputValue('#layer')}`);
      assert(await page.inputValue('#head') === '1', `head ${await page.inputValue('#head')}`);
      assert(await page.isChecked('#overlay-mask') === mask, 'mask overlay not restored');
      assert(hashParams(page).get('doc') === hash.get('doc'), `doc ${hashParams(page).get('doc')}, was ${hash.get('doc')}`);
      assert((await sectionHeadings(page)).includes('NAME'), 'the section tree has no NAME');
      assert((await canvasCensus(page, 'a')).nonWhite > 0, 'the heatmap is blank');
    }, { needs: ['page', 'document'] });

    await check('dragging a rectangle zooms in', async () => {
      const before = await apiView(page);
      const box = await page.locator(heatmap('a')).boundingBox();
      await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.35, box.y + box.height * 0.3, { steps: 4 });
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.45, { steps: 4 });
      await page.mouse.up();
      await waitReady(page);
      const hash = hashParams(page);
      assert(hash.has('q0') && hash.has('q1'), `no zoom in the address: ${hash}`);
      const span = Number(hash.get('q1')) - Number(hash.get('q0'));
      assert(span < before.q1 - before.q0, `q1 − q0 = ${span}, was ${before.q1 - before.q0}`);
      const after = await apiView(page);
      assert(after.q0 === Number(hash.get('q0')) && after.q1 === Number(hash.get('q1')), 'the API view differs from the address');
      assert((await canvasCensus(page, 'a')).nonWhite > 0, 'the zoomed heatmap is blank');
      return `queries ${before.q0}–${before.q1} → ${after.q0}–${after.q1}`;
    }, { needs: ['page', 'document'] });

    await check('an API error is shown in #error', async () => {
      await page.fill('#path', '/etc/passwd');
      await page.click('#load-path');
      await waitReady(page);
      await page.waitForSelector('#error:not([hidden])', { timeout: TIMEOUT });
      const text = await errorText(page);
      assert(text.length > 0, '#error is empty');
      return text.slice(0, 80);
    }, { needs: ['page'] });

    await check('the page raised no uncaught JavaScript error', async () => {
      assert(pageErrors.length === 0, pageErrors.join(' | '));
    });
  } finally {
    await browser.close();
  }
  console.log(`# ${failures ? `${failures} check(s) failed` : 'all checks passed'}`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.log(`not ok - the test itself failed: ${e?.stack ?? e}`);
  process.exit(1);
});
