// strata explore: the page that shows a model's attention on a document.
//
// Everything comes from the JSON API of `strata explore` (docs/explore.md); this file only
// fetches, draws and keeps the view in the address bar. No build step, no dependencies.
'use strict';

const CANVAS_SIZE = 512;      // heatmap canvas, in pixels per side
const MAX_CELLS = 256;        // cells per side asked of /api/attention
const TOKENS_PER_PAGE = 300;  // tokens shown at once in the token strip
const TOP_SELECTED = 10;      // entries listed for a selected row or column

const COLOURS = {
  prefix: 'rgb(242,140,40)',
  section: 'rgb(150,30,110)',
  mask: 'rgb(80,80,80)',
  tileFull: 'rgb(30,150,60)',
  tilePartial: 'rgb(230,160,0)',
  selection: 'rgb(220,30,30)',
};

// Sequential ramp white -> dark blue (stops of the usual "Blues" scheme).
const BLUES = [[255, 255, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
// Diverging ramp for signed values (biases): red below zero, blue above.
const RED_BLUE = [[178, 24, 43], [239, 138, 98], [255, 255, 255], [103, 169, 207], [33, 102, 172]];

const $ = (id) => document.getElementById(id);

const state = {
  runs: [],              // /api/runs: runs
  roots: [],             // /api/runs: roots
  layout: [],            // run ids shown side by side
  doc: null,             // the document, as /api/documents answers it
  path: null,            // the server path the document was read from, if any
  layer: 0,
  head: '0',             // a head index as a string, or 'mean'
  view: null,            // {q0, q1, k0, k1} in the base run's columns, or null for everything
  overlays: { sections: true, mask: false, tiles: false },
  scale: 'sqrt',
  tab: 'attention',
  tokenPage: 0,
  selection: null,       // {run, axis: 'row' | 'col', begin, end}, columns as in the view
};

// Per run id: {run, root, canvas, stats, message, data} (data: the last /api/attention answer).
const panels = new Map();

// ---------------------------------------------------------------------------------------------
// Talking to the server

class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

async function api(url, options = {}) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (e) {
    throw new ApiError(`cannot reach the server: ${e.message}`, 0);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: reported below.
  }
  if (!response.ok) {
    const message = body?.error?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiError(message, response.status);
  }
  if (body === null) throw new ApiError(`${url}: the answer is not JSON`, response.status);
  return body;
}

function postJson(url, payload) {
  return api(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(payload),
  });
}

function query(params) {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null)).toString();
}

// Tests and people alike can tell when the page has settled: body[data-state] is "loading"
// while any task runs and "ready" once the last one is done (and has drawn what it fetched).
let pendingTasks = 0;

async function busy(task) {
  pendingTasks += 1;
  document.body.dataset.state = 'loading';
  try {
    return await task();
  } catch (e) {
    showError(e.message ?? String(e));
    return undefined;
  } finally {
    pendingTasks -= 1;
    if (pendingTasks === 0) document.body.dataset.state = 'ready';
  }
}

function showError(message) {
  const element = $('error');
  element.textContent = message;
  element.hidden = false;
}

function clearError() {
  $('error').textContent = '';
  $('error').hidden = true;
}

// ---------------------------------------------------------------------------------------------
// The address bar: #runs=a,b&doc=ID&path=..&layer=0&head=1&q0=..&q1=..&k0=..&k1=..&sections=1..

function writeHash() {
  const p = new URLSearchParams();
  p.set('runs', state.layout.join(','));
  if (state.doc) p.set('doc', state.doc.id);
  if (state.path) p.set('path', state.path);
  if (state.path && state.doc) p.set('format', state.doc.format);
  p.set('layer', String(state.layer));
  p.set('head', state.head);
  if (state.view) for (const key of ['q0', 'q1', 'k0', 'k1']) p.set(key, String(state.view[key]));
  for (const [name, on] of Object.entries(state.overlays)) p.set(name, on ? '1' : '0');
  p.set('scale', state.scale);
  if (state.tab !== 'attention') p.set('tab', state.tab);
  history.replaceState(null, '', `#${p.toString()}`);
}

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const integer = (name) => (/^\d+$/.test(p.get(name) ?? '') ? Number(p.get(name)) : null);
  const saved = {
    runs: p.get('runs') ? p.get('runs').split(',').filter(Boolean) : null,
    doc: p.get('doc'),
    path: p.get('path'),
    format: p.get('format'),
    layer: integer('layer'),
    head: p.get('head'),
    scale: p.get('scale'),
    tab: p.get('tab'),
    overlays: {},
    view: null,
  };
  for (const name of Object.keys(state.overlays)) if (p.has(name)) saved.overlays[name] = p.get(name) === '1';
  const [q0, q1, k0, k1] = ['q0', 'q1', 'k0', 'k1'].map(integer);
  if ([q0, q1, k0, k1].every((v) => v !== null) && q1 > q0 && k1 > k0) saved.view = { q0, q1, k0, k1 };
  return saved;
}

// Settings from the address bar, checked against what the server offers.
function applySaved(saved) {
  const ids = state.runs.map((r) => r.id);
  const wanted = (saved.runs ?? []).filter((id) => ids.includes(id));
  state.layout = wanted.length ? wanted : ids;
  const layers = layerCount();
  state.layer = saved.layer !== null && saved.layer < layers ? saved.layer : 0;
  const heads = headCount(state.layer);
  state.head = saved.head === 'mean' || (/^\d+$/.test(saved.head ?? '') && Number(saved.head) < heads)
    ? saved.head : '0';
  state.scale = ['sqrt', 'linear', 'log'].includes(saved.scale) ? saved.scale : 'sqrt';
  state.tab = ['attention', 'biases', 'analyses'].includes(saved.tab) ? saved.tab : 'attention';
  Object.assign(state.overlays, saved.overlays);
  state.view = saved.view;
}

// The document named in the address bar: by id while the server keeps it, else read again by path.
async function restoreDocument(saved) {
  if (saved.doc) {
    try {
      return { doc: await api(`/api/documents/${encodeURIComponent(saved.doc)}`), path: saved.path };
    } catch (e) {
      if (e.status !== 404) throw e;
      if (!saved.path) throw new ApiError('the document of this address is no longer in the server\'s memory: load it again', 404);
    }
  }
  if (saved.path) {
    const format = ['markdown', 'man', 'plain'].includes(saved.format) ? saved.format : 'auto';
    const doc = await postJson('/api/documents', { path: saved.path, format });
    return { doc, path: saved.path };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Runs, layers and heads

function runInfo(id) {
  return state.runs.find((r) => r.id === id);
}

function layerCount() {
  return Math.max(0, ...state.runs.map((r) => r.layers.length));
}

function headCount(layer) {
  return Math.max(0, ...state.runs.map((r) => r.layers[layer]?.heads ?? 0));
}

function renderRunList() {
  const list = $('runs');
  list.replaceChildren();
  for (const run of state.runs) {
    const item = document.createElement('li');
    item.dataset.run = run.id;
    item.title = run.path;
    const analyses = Object.entries(run.analyses ?? {}).filter(([, on]) => on).map(([name]) => name);
    item.textContent = `${run.id}: ${run.name} (${run.architecture}, ${run.layers.length} layers`
      + `${analyses.length ? `, ${analyses.join(' & ')}` : ''})`;
    list.append(item);
  }
  $('roots').textContent = state.roots.length
    ? `Server files are read under: ${state.roots.join(', ')}`
    : 'The server reads no files (started without --root).';
}

function fillSelect(select, options, value) {
  select.replaceChildren(...options.map(([optionValue, label]) => new Option(label, optionValue)));
  select.value = value;
}

function renderControls() {
  const ids = state.runs.map((r) => r.id);
  const layouts = ids.map((id) => [id, `${id} only`]);
  if (ids.length > 1) layouts.unshift([ids.join(','), `${ids.join(' | ')} side by side`]);
  fillSelect($('layout'), layouts, state.layout.join(','));
  $('layout').disabled = ids.length < 2;

  const layers = [];
  for (let l = 0; l < layerCount(); l++) {
    const name = state.runs.map((r) => r.layers[l]?.name).find(Boolean) ?? '';
    layers.push([String(l), `${l} ${name}`]);
  }
  fillSelect($('layer'), layers, String(state.layer));
  renderHeadSelect();

  $('scale').value = state.scale;
  for (const [name, on] of Object.entries(state.overlays)) $(`overlay-${name}`).checked = on;
  fillSelect($('export-run'), state.layout.map((id) => [id, `run ${id}`]), state.layout[0]);
  $('export-run').hidden = state.layout.length < 2;
  renderLayerInfo();
}

function renderHeadSelect() {
  const heads = [];
  for (let h = 0; h < headCount(state.layer); h++) heads.push([String(h), String(h)]);
  heads.push(['mean', 'mean']);
  fillSelect($('head'), heads, state.head);
}

function renderLayerInfo() {
  const lines = state.layout.map((id) => {
    const layer = runInfo(id)?.layers[state.layer];
    if (!layer) return `${id}: no layer ${state.layer}`;
    return `${id}: ${layer.heads} heads; ${layer.spec}`;  // the spec names its bias relation
  });
  $('layer-info').textContent = lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The document: info, section tree, token strip

async function loadDocument(payload, path) {
  clearError();
  const doc = await postJson('/api/documents', payload);
  await setDocument(doc, doc.path ?? path ?? null, { keepView: false });
}

async function setDocument(doc, path, { keepView }) {
  state.doc = doc;
  state.path = path;
  if (!keepView) state.view = null;
  state.selection = null;
  state.tokenPage = 0;
  renderDocumentInfo();
  renderSectionTree();
  renderTokens();
  renderSelection();
  await Promise.all([renderAttention(), renderTab()]);
}

function renderDocumentInfo() {
  const doc = state.doc;
  const parts = [`${doc.name || '(unnamed)'} · ${doc.format}`];
  for (const id of state.layout) {
    const info = doc.runs[id];
    if (!info) continue;
    let text = `${id}: ${info.tokens.length} tokens`;
    if (info.prefix) text += ` + ${info.prefix} prefix slots`;
    if (info.truncated) text += ` (cut from ${info.document_tokens})`;
    parts.push(text);
  }
  $('doc-info').textContent = parts.join('\n');
}

// A stable light colour per section, shared by the tree and the token strip.
function sectionColour(index) {
  const hue = (index * 137.508) % 360;
  return `hsl(${hue.toFixed(0)} 70% 88%)`;
}

function primaryRun() {
  return state.layout.find((id) => state.doc?.runs[id]) ?? state.layout[0];
}

function renderSectionTree() {
  const container = $('sections');
  const sections = state.doc.sections;
  const ranges = state.doc.runs[primaryRun()]?.section_ranges ?? [];
  const lists = new Map();  // section index -> the <ul> of its children
  const rootList = document.createElement('ul');
  for (const section of sections) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.section = String(section.index);
    const [begin, end] = ranges[section.index] ?? [0, 0];
    button.textContent = section.heading || (section.parent < 0 ? '(document)' : '(untitled)');
    button.title = `tokens ${begin}–${end}`;
    button.disabled = end <= begin;
    button.style.borderLeftColor = sectionColour(section.index);
    button.addEventListener('click', () => zoomToSection(section.index));
    const range = document.createElement('span');
    range.className = 'range';
    range.textContent = ` ${begin}–${end}`;
    item.append(button, range);
    const children = document.createElement('ul');
    item.append(children);
    lists.set(section.index, children);
    (lists.get(section.parent) ?? rootList).append(item);
  }
  container.replaceChildren(rootList);
}

function zoomToSection(index) {
  const run = primaryRun();
  const info = state.doc.runs[run];
  const [begin, end] = info.section_ranges[index];
  if (end <= begin) return;
  const k0 = begin + info.prefix - columnShift(run);
  state.view = { q0: begin, q1: end, k0, k1: k0 + (end - begin) };
  state.selection = null;
  clearError();
  busy(renderAttention);
}

function renderTokens() {
  const container = $('tokens');
  const info = state.doc?.runs[primaryRun()];
  if (!info) {
    container.replaceChildren();
    $('tokens-page').textContent = '';
    return;
  }
  const pages = Math.max(1, Math.ceil(info.tokens.length / TOKENS_PER_PAGE));
  state.tokenPage = Math.min(Math.max(state.tokenPage, 0), pages - 1);
  const begin = state.tokenPage * TOKENS_PER_PAGE;
  const end = Math.min(info.tokens.length, begin + TOKENS_PER_PAGE);
  const headings = state.doc.sections.map((s) => s.heading);
  const spans = [];
  for (let i = begin; i < end; i++) {
    const span = document.createElement('span');
    const section = info.token_sections[i];
    span.textContent = info.tokens[i];
    span.style.background = sectionColour(section);
    span.title = `token ${i}, section ${headings[section] || section}`;
    spans.push(span);
  }
  container.replaceChildren(...spans);
  $('tokens-page').textContent = `tokens ${begin}–${end} of ${info.tokens.length} (run ${primaryRun()})`;
}

// ---------------------------------------------------------------------------------------------
// Attention panels

function buildPanels() {
  const container = $('panels');
  container.replaceChildren();
  panels.clear();
  for (const run of state.layout) {
    const root = document.createElement('figure');
    root.className = 'panel';
    const caption = document.createElement('figcaption');
    caption.textContent = `run ${run}: ${runInfo(run)?.name ?? ''}`;
    const frame = document.createElement('div');
    frame.className = 'frame';
    const canvas = document.createElement('canvas');
    canvas.className = 'heatmap';
    canvas.dataset.run = run;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `attention weights of run ${run}: hover for values, drag to zoom`);
    canvas.width = CANVAS_SIZE;
    canvas.height = CANVAS_SIZE;
    const dragBox = document.createElement('div');
    dragBox.className = 'drag-box';
    dragBox.hidden = true;
    frame.append(canvas, dragBox);
    const message = document.createElement('p');
    message.className = 'panel-message';
    const stats = document.createElement('p');
    stats.className = 'stats';
    root.append(caption, frame, message, stats);
    container.append(root);
    const panel = { run, root, canvas, dragBox, stats, message, data: null };
    panels.set(run, panel);
    attachPointerHandlers(panel);
  }
}

// The view (and a selected column) is kept in the columns of the base run, the first the
// server lists: a run with another number of prefix slots shows the same keys, its columns
// shifted by the difference.
function columnShift(run) {
  const base = state.doc.runs[state.runs[0].id];
  return (state.doc.runs[run]?.prefix ?? 0) - (base?.prefix ?? 0);
}

// The view asked of one run: the shared view, in that run's columns, cut to its tokens.
function viewFor(run) {
  if (!state.view) return {};
  const info = state.doc.runs[run];
  // The sizes the server last reported for this document, else those its tokens imply.
  const last = panels.get(run)?.data;
  const known = last && last.doc === state.doc.id;
  const queries = known ? last.queries : info.tokens.length;
  const columns = known ? last.keys : info.prefix + info.tokens.length;
  const shift = columnShift(run);
  const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
  const q0 = clamp(state.view.q0, 0, queries), q1 = clamp(state.view.q1, q0, queries);
  const k0 = clamp(state.view.k0 + shift, 0, columns), k1 = clamp(state.view.k1 + shift, k0, columns);
  if (q1 <= q0 || k1 <= k0) throw new Error(`the view lies outside run ${run}'s tokens`);
  return { q0, q1, k0, k1 };
}

let renderGeneration = 0;  // answers to an older render are dropped

async function renderAttention() {
  writeHash();
  if (!state.doc) return;
  const generation = ++renderGeneration;
  await Promise.all(state.layout.map(async (run) => {
    const panel = panels.get(run);
    try {
      if (!state.doc.runs[run]) throw new Error(`the document has no tokens for run ${run}`);
      const params = {
        run, doc: state.doc.id, layer: state.layer, head: state.head, ...viewFor(run), max: MAX_CELLS,
      };
      const data = await api(`/api/attention?${query(params)}`);
      if (generation !== renderGeneration) return;
      panel.data = data;
      panel.message.textContent = '';
      drawPanel(panel);
    } catch (e) {
      if (generation !== renderGeneration) return;
      panel.data = null;
      clearCanvas(panel.canvas);
      panel.stats.textContent = '';
      panel.message.textContent = e.message;
      showError(`run ${run}: ${e.message}`);
    }
  }));
  if (generation === renderGeneration) renderSelection();
}

function clearCanvas(canvas) {
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = 'white';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
}

function redrawPanels() {
  for (const panel of panels.values()) if (panel.data) drawPanel(panel);
}

function drawPanel(panel) {
  const painter = new CanvasPainter(panel.canvas);
  paintHeatmap(painter, panel.run, panel.data, panel.canvas.width, panel.canvas.height);
  panel.stats.replaceChildren(...statsLines(panel.run, panel.data));
}

function statsLines(run, data) {
  const s = data.stats ?? {};
  const pct = (v) => (typeof v === 'number' ? `${(100 * v).toFixed(1)}%` : 'n/a');
  const lines = [
    `queries ${data.q0}–${data.q1} × columns ${data.k0}–${data.k1}: ${data.values.length} × `
      + `${data.values[0]?.length ?? 0} cells${data.exact ? ' (exact weights)' : ' (block means)'}`,
    `sparsity ${pct(s.sparsity)} · tile density ${pct(s.tile_density)} (${s.tiles_visited ?? '?'} of `
      + `${s.tiles_total ?? '?'} tiles)${data.prefix ? ` · ${data.prefix} prefix slots` : ''}`,
    `colour: 0 (white) to ${Number(data.max_value).toPrecision(4)} (dark blue), ${scaleName()}`,
  ];
  if (s.token_sorted) lines.push('kernel sorts tokens');
  return lines.map((text) => {
    const line = document.createElement('span');
    line.textContent = text;
    return line;
  });
}

function scaleName() {
  return { sqrt: 'square-root scale', linear: 'linear scale', log: 'log scale (4 decades)' }[state.scale];
}

// ---------------------------------------------------------------------------------------------
// Painting: one routine draws a view onto a canvas or into an SVG document

function interpolate(ramp, t) {
  const x = Math.min(Math.max(t, 0), 1) * (ramp.length - 1);
  const i = Math.min(Math.floor(x), ramp.length - 2);
  const f = x - i;
  const channel = (k) => Math.round(ramp[i][k] + f * (ramp[i + 1][k] - ramp[i][k]));
  return `rgb(${channel(0)},${channel(1)},${channel(2)})`;
}

// Attention weights are heavy-tailed: the default square-root scale keeps the small weights
// visible; the scale is always normalised by the view's largest weight.
function weightColour(value, maxValue) {
  if (!(maxValue > 0) || !(value > 0)) return interpolate(BLUES, 0);
  const ratio = value / maxValue;
  let t = ratio;
  if (state.scale === 'sqrt') t = Math.sqrt(ratio);
  else if (state.scale === 'log') t = 1 + Math.log10(Math.max(ratio, 1e-4)) / 4;
  return interpolate(BLUES, t);
}

class CanvasPainter {
  constructor(canvas) {
    this.ctx = canvas.getContext('2d');
  }

  fill(x, y, w, h, colour, opacity = 1) {
    this.ctx.globalAlpha = opacity;
    this.ctx.fillStyle = colour;
    this.ctx.fillRect(x, y, w, h);
    this.ctx.globalAlpha = 1;
  }

  line(x1, y1, x2, y2, colour, width = 1, dashed = false) {
    const ctx = this.ctx;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width;
    ctx.setLineDash(dashed ? [4, 3] : []);
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x2, y2);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  outline(x, y, w, h, colour, width = 1) {
    this.ctx.strokeStyle = colour;
    this.ctx.lineWidth = width;
    this.ctx.strokeRect(x, y, w, h);
  }
}

class SvgPainter {
  constructor() {
    this.parts = [];
  }

  fill(x, y, w, h, colour, opacity = 1) {
    const alpha = opacity < 1 ? ` fill-opacity="${opacity.toFixed(3)}"` : '';
    this.parts.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="${colour}"${alpha}/>`);
  }

  line(x1, y1, x2, y2, colour, width = 1, dashed = false) {
    const dash = dashed ? ' stroke-dasharray="4 3"' : '';
    this.parts.push(`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${colour}" stroke-width="${width}"${dash}/>`);
  }

  outline(x, y, w, h, colour, width = 1) {
    this.parts.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="none" stroke="${colour}" stroke-width="${width}"/>`);
  }

  document(width, height, title) {
    return `<?xml version="1.0" encoding="UTF-8"?>\n`
      + `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" `
      + `viewBox="0 0 ${width} ${height}" shape-rendering="crispEdges">\n`
      + `<title>${escapeXml(title)}</title>\n${this.parts.join('\n')}\n</svg>\n`;
  }
}

function escapeXml(text) {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' }[c]));
}

// Token positions map linearly onto the canvas; cell borders are rounded to whole pixels so
// that cells tile the canvas without seams and hit-testing agrees with what is drawn.
function geometry(data, width, height) {
  const x = (column) => Math.round(((column - data.k0) / (data.k1 - data.k0)) * width);
  const y = (queryIndex) => Math.round(((queryIndex - data.q0) / (data.q1 - data.q0)) * height);
  return { x, y, width, height };
}

function paintHeatmap(painter, run, data, width, height) {
  const g = geometry(data, width, height);
  painter.fill(0, 0, width, height, 'rgb(255,255,255)');
  paintCells(painter, data, g);
  if (state.overlays.mask && data.visible) paintMask(painter, data, g);
  if (state.overlays.sections) paintSections(painter, run, data, g);
  if (state.overlays.tiles && data.tiles) paintTiles(painter, data, g);
  paintPrefixLine(painter, data, g);
  paintSelection(painter, run, data, g);
}

function forEachCell(data, g, visit) {
  const rows = data.row_edges, cols = data.col_edges;
  for (let r = 0; r + 1 < rows.length; r++) {
    const y0 = g.y(rows[r]), y1 = g.y(rows[r + 1]);
    if (y1 <= y0) continue;
    for (let c = 0; c + 1 < cols.length; c++) {
      const x0 = g.x(cols[c]), x1 = g.x(cols[c + 1]);
      if (x1 > x0) visit(r, c, x0, y0, x1 - x0, y1 - y0);
    }
  }
}

function paintCells(painter, data, g) {
  forEachCell(data, g, (r, c, x, y, w, h) => {
    const value = data.values[r][c];
    if (value > 0) painter.fill(x, y, w, h, weightColour(value, data.max_value));
  });
}

// Hidden pairs are shaded dark; cells whose pairs are partly visible lighter, by the hidden share.
function paintMask(painter, data, g) {
  forEachCell(data, g, (r, c, x, y, w, h) => {
    const visible = data.visible[r]?.[c] ?? 1;
    if (visible <= 0) painter.fill(x, y, w, h, COLOURS.mask, 0.6);
    else if (visible < 1) painter.fill(x, y, w, h, COLOURS.mask, 0.1 + 0.3 * (1 - visible));
  });
}

function paintSections(painter, run, data, g) {
  const info = state.doc.runs[run];
  for (const section of state.doc.sections) {
    if (section.parent < 0) continue;  // the root spans everything
    const [begin, end] = info.section_ranges[section.index] ?? [0, 0];
    if (end <= begin) continue;
    const width = section.depth <= 1 ? 1.5 : 1;
    const dashed = section.depth > 1;
    if (begin > data.q0 && begin < data.q1) {
      const y = g.y(begin) + 0.5;
      painter.line(0, y, g.width, y, COLOURS.section, width, dashed);
    }
    const column = begin + info.prefix;
    if (column > data.k0 && column < data.k1) {
      const x = g.x(column) + 0.5;
      painter.line(x, 0, x, g.height, COLOURS.section, width, dashed);
    }
  }
}

function paintTiles(painter, data, g) {
  const clampX = (v) => Math.min(Math.max(v, 0), g.width);
  const clampY = (v) => Math.min(Math.max(v, 0), g.height);
  // A tile is [q_begin, q_end, k_begin, k_end] in queries and columns (docs/explore.md).
  const outlineTile = ([qa, qb, ka, kb], colour) => {
    const y0 = clampY(g.y(qa)), y1 = clampY(g.y(qb));
    const x0 = clampX(g.x(ka)), x1 = clampX(g.x(kb));
    if (x1 - x0 >= 2 && y1 - y0 >= 2) painter.outline(x0 + 1, y0 + 1, x1 - x0 - 2, y1 - y0 - 2, colour, 2);
  };
  for (const tile of data.tiles.partial ?? []) outlineTile(tile, COLOURS.tilePartial);
  for (const tile of data.tiles.full ?? []) outlineTile(tile, COLOURS.tileFull);
}

function paintPrefixLine(painter, data, g) {
  if (data.prefix > data.k0 && data.prefix < data.k1) {
    const x = g.x(data.prefix);
    painter.line(x, 0, x, g.height, COLOURS.prefix, 2);
  }
}

function paintSelection(painter, run, data, g) {
  const s = state.selection;
  if (!s) return;
  if (s.axis === 'row' && s.end > data.q0 && s.begin < data.q1) {
    const y0 = g.y(Math.max(s.begin, data.q0)), y1 = g.y(Math.min(s.end, data.q1));
    painter.outline(0.5, y0 + 0.5, g.width - 1, Math.max(y1 - y0 - 1, 1), COLOURS.selection, 1);
  } else if (s.axis === 'col') {
    const [begin, end] = [s.begin + columnShift(run), s.end + columnShift(run)];
    if (end <= data.k0 || begin >= data.k1) return;
    const x0 = g.x(Math.max(begin, data.k0)), x1 = g.x(Math.min(end, data.k1));
    painter.outline(x0 + 0.5, 0.5, Math.max(x1 - x0 - 1, 1), g.height - 1, COLOURS.selection, 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Pointer: hover, click to select, drag to zoom

// The index of the cell whose (rounded) pixel span holds pixel p: the last edge drawn at or before p.
function cellAt(edges, toPixel, p) {
  let lo = 0, hi = edges.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (toPixel(edges[mid]) <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function canvasPoint(canvas, event) {
  const rect = canvas.getBoundingClientRect();
  const px = Math.floor(((event.clientX - rect.left) * canvas.width) / rect.width);
  const py = Math.floor(((event.clientY - rect.top) * canvas.height) / rect.height);
  return { px: Math.min(Math.max(px, 0), canvas.width - 1), py: Math.min(Math.max(py, 0), canvas.height - 1) };
}

function cellUnder(panel, event) {
  const data = panel.data;
  if (!data || !data.values.length) return null;
  const g = geometry(data, panel.canvas.width, panel.canvas.height);
  const { px, py } = canvasPoint(panel.canvas, event);
  return { r: cellAt(data.row_edges, g.y, py), c: cellAt(data.col_edges, g.x, px), px, py };
}

let drag = null;  // {panel, start: {px, py}, client: {x, y}, moved}

function attachPointerHandlers(panel) {
  const canvas = panel.canvas;
  canvas.addEventListener('mousemove', (event) => {
    if (drag) return;
    const cell = cellUnder(panel, event);
    if (cell) showTooltip(event, cellDescription(panel.run, panel.data, cell.r, cell.c));
  });
  canvas.addEventListener('mouseleave', hideTooltip);
  canvas.addEventListener('mousedown', (event) => {
    if (event.button !== 0 || !panel.data) return;
    event.preventDefault();
    drag = { panel, start: canvasPoint(canvas, event), client: { x: event.clientX, y: event.clientY }, moved: false };
  });
}

window.addEventListener('mousemove', (event) => {
  if (!drag) return;
  if (Math.hypot(event.clientX - drag.client.x, event.clientY - drag.client.y) > 4) drag.moved = true;
  if (!drag.moved) return;
  hideTooltip();
  const canvas = drag.panel.canvas;
  const end = canvasPoint(canvas, event);
  const scale = canvas.getBoundingClientRect().width / canvas.width;
  const box = drag.panel.dragBox;
  box.hidden = false;
  box.style.left = `${Math.min(drag.start.px, end.px) * scale}px`;
  box.style.top = `${Math.min(drag.start.py, end.py) * scale}px`;
  box.style.width = `${Math.abs(end.px - drag.start.px) * scale}px`;
  box.style.height = `${Math.abs(end.py - drag.start.py) * scale}px`;
});

window.addEventListener('mouseup', (event) => {
  if (!drag) return;
  const { panel, start, moved } = drag;
  drag = null;
  panel.dragBox.hidden = true;
  if (moved) zoomToPixels(panel, start, canvasPoint(panel.canvas, event));
  else selectCell(panel, event);
});

function zoomToPixels(panel, a, b) {
  const data = panel.data;
  const g = geometry(data, panel.canvas.width, panel.canvas.height);
  const r0 = cellAt(data.row_edges, g.y, Math.min(a.py, b.py)), r1 = cellAt(data.row_edges, g.y, Math.max(a.py, b.py));
  const c0 = cellAt(data.col_edges, g.x, Math.min(a.px, b.px)), c1 = cellAt(data.col_edges, g.x, Math.max(a.px, b.px));
  const [q0, q1, k0, k1] = [data.row_edges[r0], data.row_edges[r1 + 1], data.col_edges[c0], data.col_edges[c1 + 1]];
  if (q0 === data.q0 && q1 === data.q1 && k0 === data.k0 && k1 === data.k1) return;
  const shift = columnShift(panel.run);
  state.view = { q0, q1, k0: k0 - shift, k1: k1 - shift };
  state.selection = null;
  clearError();
  busy(renderAttention);
}

function selectCell(panel, event) {
  const cell = cellUnder(panel, event);
  if (!cell) return;
  const data = panel.data;
  const shift = columnShift(panel.run);
  state.selection = event.shiftKey
    ? { run: panel.run, axis: 'col', begin: data.col_edges[cell.c] - shift, end: data.col_edges[cell.c + 1] - shift }
    : { run: panel.run, axis: 'row', begin: data.row_edges[cell.r], end: data.row_edges[cell.r + 1] };
  redrawPanels();
  renderSelection();
}

// ---------------------------------------------------------------------------------------------
// Describing cells: tooltip and selection list

function quote(text, limit = 40) {
  const cut = text.length > limit ? `${text.slice(0, limit)}…` : text;
  return JSON.stringify(cut);  // quotes, and escapes newlines so a label stays on its line
}

function queryLabel(run, begin, end) {
  return quote(state.doc.runs[run].tokens.slice(begin, end).join(''));
}

// Columns below `prefix` are prefix slots ("prefix k"); the others are keys, token = column - prefix.
function keyLabel(run, begin, end) {
  const info = state.doc.runs[run];
  const parts = [];
  if (begin < info.prefix) {
    const last = Math.min(end, info.prefix) - 1;
    parts.push(last > begin ? `prefix ${begin}…${last}` : `prefix ${begin}`);
  }
  if (end > info.prefix) {
    parts.push(quote(info.tokens.slice(Math.max(begin, info.prefix) - info.prefix, end - info.prefix).join('')));
  }
  return parts.join(' + ');
}

function formatWeight(value) {
  return typeof value === 'number' ? value.toFixed(6) : 'n/a';
}

function cellDescription(run, data, r, c) {
  const [qa, qb] = [data.row_edges[r], data.row_edges[r + 1]];
  const [ka, kb] = [data.col_edges[c], data.col_edges[c + 1]];
  const block = (qb - qa) * (kb - ka) > 1;
  const lines = [
    `query ${qa}–${qb} ${queryLabel(run, qa, qb)}`,
    `key ${ka}–${kb} ${keyLabel(run, ka, kb)}`,
    `${block ? 'mean weight' : 'weight'} ${formatWeight(data.values[r][c])}`,
  ];
  const visible = data.visible?.[r]?.[c];
  if (typeof visible === 'number' && visible < 1) lines.push(`visible ${(100 * visible).toFixed(1)}% of pairs`);
  if (state.layout.length > 1) lines.push(`run ${run}`);
  return lines.join('\n');
}

function showTooltip(event, text) {
  const tooltip = $('tooltip');
  tooltip.textContent = text;
  tooltip.hidden = false;
  // Keep it inside the window: flip to the left/top of the pointer near the edges.
  const { offsetWidth: w, offsetHeight: h } = tooltip;
  const x = event.clientX + 14 + w > window.innerWidth ? event.clientX - 14 - w : event.clientX + 14;
  const y = event.clientY + 14 + h > window.innerHeight ? event.clientY - 14 - h : event.clientY + 14;
  tooltip.style.left = `${Math.max(0, x)}px`;
  tooltip.style.top = `${Math.max(0, y)}px`;
}

function hideTooltip() {
  $('tooltip').hidden = true;
}

function renderSelection() {
  const container = $('selection');
  const s = state.selection;
  const data = s && panels.get(s.run)?.data;
  if (!s || !data) {
    const hint = document.createElement('p');
    hint.className = 'hint';
    hint.textContent = 'Click a cell to list a query\'s largest weights; Shift+click for a key\'s.';
    container.replaceChildren(hint);
    return;
  }
  const rowAxis = s.axis === 'row';
  const edges = rowAxis ? data.row_edges : data.col_edges;
  const shift = rowAxis ? 0 : columnShift(s.run);
  const [begin, end] = [s.begin + shift, s.end + shift];  // in the clicked run's columns
  const index = edges.indexOf(begin);
  if (index < 0 || edges[index + 1] !== end) {
    container.replaceChildren();
    return;
  }
  const heading = document.createElement('p');
  heading.textContent = rowAxis
    ? `run ${s.run}, query ${begin}–${end} ${queryLabel(s.run, begin, end)}: largest weights`
    : `run ${s.run}, key ${begin}–${end} ${keyLabel(s.run, begin, end)}: largest weights`;
  const entries = rowAxis
    ? data.values[index].map((value, c) => ({ value, c, r: index }))
    : data.values.map((row, r) => ({ value: row[index], r, c: index }));
  entries.sort((x, y) => y.value - x.value);
  const list = document.createElement('ol');
  for (const { value, r, c } of entries.slice(0, TOP_SELECTED)) {
    const item = document.createElement('li');
    item.textContent = rowAxis
      ? `key ${data.col_edges[c]}–${data.col_edges[c + 1]} ${keyLabel(s.run, data.col_edges[c], data.col_edges[c + 1])} ${formatWeight(value)}`
      : `query ${data.row_edges[r]}–${data.row_edges[r + 1]} ${queryLabel(s.run, data.row_edges[r], data.row_edges[r + 1])} ${formatWeight(value)}`;
    list.append(item);
  }
  container.replaceChildren(heading, list);
}

// ---------------------------------------------------------------------------------------------
// Export

function exportBaseName(run) {
  return `attention-${run}-L${state.layer}-H${state.head}`;
}

function download(blob, filename) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked later: revoking at once can cancel the download in some browsers.
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

function exportPanel() {
  const panel = panels.get($('export-run').value || state.layout[0]);
  if (!panel?.data) {
    showError('nothing to export yet: load a document');
    return null;
  }
  return panel;
}

function exportPng() {
  const panel = exportPanel();
  if (!panel) return;
  panel.canvas.toBlob((blob) => download(blob, `${exportBaseName(panel.run)}.png`), 'image/png');
}

function exportSvg() {
  const panel = exportPanel();
  if (!panel) return;
  const { width, height } = panel.canvas;
  const painter = new SvgPainter();
  paintHeatmap(painter, panel.run, panel.data, width, height);
  const d = panel.data;
  const title = `run ${panel.run}, layer ${state.layer}, head ${state.head}, queries ${d.q0}–${d.q1}, columns ${d.k0}–${d.k1}`;
  download(new Blob([painter.document(width, height, title)], { type: 'image/svg+xml' }), `${exportBaseName(panel.run)}.svg`);
}

// ---------------------------------------------------------------------------------------------
// Small labelled matrices: relation biases, head importance, global relevance

// A canvas heatmap with row labels at the left and column labels on top; hovering a cell shows
// describe(r, c) in the tooltip. Signed matrices use a diverging scale centred on zero.
function matrixFigure({ title, values, rowLabels, colLabels, describe }) {
  const figure = document.createElement('figure');
  figure.className = 'matrix';
  const caption = document.createElement('figcaption');
  caption.textContent = title;
  const canvas = document.createElement('canvas');
  figure.append(caption, canvas);

  const rows = values.length, cols = Math.max(0, ...values.map((row) => row.length));
  const numbers = values.flat().filter((v) => typeof v === 'number' && Number.isFinite(v));
  const lo = Math.min(0, ...numbers), hi = Math.max(0, ...numbers);
  const signed = lo < 0;
  const extent = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  const colour = (v) => (signed ? interpolate(RED_BLUE, 0.5 + (0.5 * v) / extent) : interpolate(BLUES, v / extent));

  const ctx = canvas.getContext('2d');
  const font = '11px system-ui, sans-serif';
  ctx.font = font;
  const clip = (text) => (text.length > 32 ? `${text.slice(0, 31)}…` : text);
  const labelWidth = (labels) => Math.min(220, Math.max(0, ...labels.map((t) => ctx.measureText(clip(t)).width))) + 8;
  const cell = Math.max(10, Math.min(28, Math.floor(360 / Math.max(rows, cols, 1))));
  const left = labelWidth(rowLabels), top = labelWidth(colLabels);
  canvas.width = left + cols * cell + 1;
  canvas.height = top + rows * cell + 1;

  ctx.fillStyle = 'white';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.font = font;
  ctx.fillStyle = '#222';
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  rowLabels.forEach((label, r) => ctx.fillText(clip(label), left - 4, top + (r + 0.5) * cell));
  colLabels.forEach((label, c) => {  // written upwards, ending at the matrix
    ctx.save();
    ctx.translate(left + (c + 0.5) * cell, top - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'left';
    ctx.fillText(clip(label), 0, 0);
    ctx.restore();
  });
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = values[r][c];
      ctx.fillStyle = typeof v === 'number' ? colour(v) : '#ddd';
      ctx.fillRect(left + c * cell, top + r * cell, cell, cell);
    }
  }
  ctx.strokeStyle = '#999';
  ctx.strokeRect(left - 0.5, top - 0.5, cols * cell + 1, rows * cell + 1);

  canvas.addEventListener('mousemove', (event) => {
    const rect = canvas.getBoundingClientRect();
    const x = ((event.clientX - rect.left) * canvas.width) / rect.width - left;
    const y = ((event.clientY - rect.top) * canvas.height) / rect.height - top;
    const r = Math.floor(y / cell), c = Math.floor(x / cell);
    if (x < 0 || y < 0 || r >= rows || c >= cols || values[r][c] === undefined) hideTooltip();
    else showTooltip(event, describe(r, c));
  });
  canvas.addEventListener('mouseleave', hideTooltip);
  return figure;
}

function messageElement(text, className = 'hint') {
  const p = document.createElement('p');
  p.className = className;
  p.textContent = text;
  return p;
}

function runHeading(run) {
  const h = document.createElement('h3');
  h.textContent = `run ${run}: ${runInfo(run)?.name ?? ''}`;
  return h;
}

const tabCache = { biases: null, analyses: null };  // the key of what each tab last showed

async function renderTab() {
  if (state.tab === 'biases') await renderBiases();
  else if (state.tab === 'analyses') await renderAnalyses();
}

async function renderBiases() {
  const key = `${state.doc?.id}|${state.layout}`;
  if (tabCache.biases === key) return;
  const container = $('biases');
  if (!state.doc) {
    container.replaceChildren(messageElement('Load a document first.'));
    return;
  }
  const blocks = await Promise.all(state.layout.map(async (run) => {
    const block = document.createElement('section');
    block.className = 'run-block';
    block.append(runHeading(run));
    try {
      const data = await api(`/api/biases?${query({ run, doc: state.doc.id })}`);
      block.append(biasesBlock(data));
    } catch (e) {
      block.append(messageElement(e.message, 'panel-message'));
    }
    return block;
  }));
  container.replaceChildren(...blocks);
  tabCache.biases = key;
}

function biasesBlock(data) {
  const block = document.createElement('div');
  if (!data.layers?.length) {
    block.append(messageElement(data.message || 'No relation bias to show for this run and document.'));
    return block;
  }
  const select = document.createElement('select');
  select.className = 'bias-layer';
  fillSelect(select, data.layers.map((l, i) => [String(i), `layer ${l.layer} ${l.name}`]), '0');
  const preferred = data.layers.findIndex((l) => l.layer === state.layer);
  if (preferred >= 0) select.value = String(preferred);
  const label = document.createElement('label');
  label.append('Layer ', select);
  const figures = document.createElement('div');
  figures.className = 'matrices';
  const show = () => {
    const layer = data.layers[Number(select.value)];
    const matrices = [['mean over heads', layer.mean], ...layer.heads.map((m, h) => [`head ${h}`, m])];
    figures.replaceChildren(...matrices.map(([name, m]) => biasFigure(name, m)));
  };
  select.addEventListener('change', show);
  show();
  block.append(label, figures);
  return block;
}

function biasFigure(name, matrix) {
  const headings = matrix.sections.map((s, i) => s || `section ${i + 1}`);
  return matrixFigure({
    title: name,
    values: matrix.values,
    rowLabels: headings,
    colLabels: headings,
    describe: (r, c) => [
      `query section ${JSON.stringify(headings[r])}`,
      `key section ${JSON.stringify(headings[c])}`,
      ...(matrix.relations?.[r]?.[c] !== undefined ? [`relation ${matrix.relations[r][c]}`] : []),
      `bias ${Number(matrix.values[r][c]).toFixed(4)}`,
    ].join('\n'),
  });
}

async function renderAnalyses() {
  const key = `${state.layout}`;
  if (tabCache.analyses === key) return;
  const blocks = await Promise.all(state.layout.map(async (run) => {
    const block = document.createElement('section');
    block.className = 'run-block';
    block.append(runHeading(run));
    try {
      block.append(analysesBlock(await api(`/api/analyses?${query({ run })}`)));
    } catch (e) {
      block.append(messageElement(e.message, 'panel-message'));
    }
    return block;
  }));
  $('analyses').replaceChildren(...blocks);
  tabCache.analyses = key;
}

function layersByHeads(title, layers, matrix, valueName) {
  const rowLabels = matrix.map((_, l) => String(layers?.[l] ?? l));
  const heads = Math.max(0, ...matrix.map((row) => row.length));
  return matrixFigure({
    title,
    values: matrix,
    rowLabels,
    colLabels: Array.from({ length: heads }, (_, h) => `head ${h}`),
    describe: (r, c) => `layer ${r} ${rowLabels[r]}\nhead ${c}\n${valueName} ${Number(matrix[r][c]).toFixed(4)}`,
  });
}

function analysesBlock(data) {
  const block = document.createElement('div');
  const figures = document.createElement('div');
  figures.className = 'matrices';
  if (data.importance) {
    const i = data.importance;
    const how = [i.method, i.normalize && `normalised per ${i.normalize}`].filter(Boolean).join(', ');
    figures.append(layersByHeads(`head importance${how ? ` (${how})` : ''}`, i.layers, i.scores, 'importance'));
  }
  for (const pattern of data.relevance?.patterns ?? []) {
    figures.append(layersByHeads(`global relevance: ${pattern.name}`, data.relevance.layers, pattern.matrix, 'relevance'));
  }
  if (!data.importance || !data.relevance) {
    block.append(messageElement(data.hint || 'No analysis has been run on this model.'));
  }
  block.append(figures);
  return block;
}

function selectTab(tab) {
  state.tab = tab;
  for (const button of document.querySelectorAll('.tab')) button.setAttribute('aria-selected', String(button.dataset.tab === tab));
  for (const name of ['attention', 'biases', 'analyses']) $(`tab-${name}`).hidden = name !== tab;
  hideTooltip();
}

// ---------------------------------------------------------------------------------------------
// Wiring

function onSettingChange(update) {
  return () => {
    clearError();
    update();
    busy(renderAttention);
  };
}

function bindControls() {
  $('load-text').addEventListener('click', () => {
    const text = $('text').value;
    if (!text.trim()) {
      showError('paste a document first');
      return;
    }
    busy(() => loadDocument({ text, format: $('format').value, name: 'pasted' }, null));
  });
  $('file').addEventListener('change', () => {
    const file = $('file').files[0];
    if (!file) return;
    busy(async () => loadDocument({ text: await file.text(), format: $('format').value, name: file.name }, null));
  });
  const loadPath = () => {
    const path = $('path').value.trim();
    if (!path) {
      showError('name a file under one of the server\'s roots');
      return;
    }
    busy(() => loadDocument({ path, format: $('format').value }, path));
  };
  $('load-path').addEventListener('click', loadPath);
  $('path').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') loadPath();
  });

  $('layout').addEventListener('change', onSettingChange(() => {
    state.layout = $('layout').value.split(',');
    state.selection = null;
    tabCache.biases = tabCache.analyses = null;
    buildPanels();
    renderControls();
    if (state.doc) {
      renderDocumentInfo();
      renderSelection();
      busy(renderTab);
    }
  }));
  $('layer').addEventListener('change', onSettingChange(() => {
    state.layer = Number($('layer').value);
    if (state.head !== 'mean' && Number(state.head) >= headCount(state.layer)) state.head = '0';
    renderHeadSelect();
    renderLayerInfo();
  }));
  $('head').addEventListener('change', onSettingChange(() => {
    state.head = $('head').value;
  }));
  $('reset-zoom').addEventListener('click', onSettingChange(() => {
    state.view = null;
    state.selection = null;
  }));

  // Overlays and the colour scale need no new data: redraw what is there.
  const redraw = (update) => () => busy(async () => {
    update();
    redrawPanels();
    writeHash();
  });
  for (const name of Object.keys(state.overlays)) {
    $(`overlay-${name}`).addEventListener('change', redraw(() => {
      state.overlays[name] = $(`overlay-${name}`).checked;
    }));
  }
  $('scale').addEventListener('change', redraw(() => {
    state.scale = $('scale').value;
  }));

  $('export-png').addEventListener('click', exportPng);
  $('export-svg').addEventListener('click', exportSvg);

  for (const button of document.querySelectorAll('.tab')) {
    button.addEventListener('click', () => {
      selectTab(button.dataset.tab);
      writeHash();
      busy(renderTab);
    });
  }
  $('tokens-prev').addEventListener('click', () => {
    state.tokenPage -= 1;
    renderTokens();
  });
  $('tokens-next').addEventListener('click', () => {
    state.tokenPage += 1;
    renderTokens();
  });
  // A hand-edited address: apply it as on a fresh load.
  window.addEventListener('hashchange', () => {
    clearError();
    busy(restoreFromHash);
  });
}

async function restoreFromHash() {
  const saved = readHash();
  applySaved(saved);
  buildPanels();
  renderControls();
  selectTab(state.tab);
  const restored = saved.doc === state.doc?.id && state.doc ? { doc: state.doc, path: state.path } : await restoreDocument(saved);
  if (restored) await setDocument(restored.doc, restored.path ?? null, { keepView: true });
  else writeHash();
}

async function start() {
  bindControls();
  await busy(async () => {
    const info = await api('/api/runs');
    state.runs = info.runs ?? [];
    state.roots = info.roots ?? [];
    renderRunList();
    await restoreFromHash();
  });
}

start();
