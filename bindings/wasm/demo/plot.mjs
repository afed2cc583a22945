// Draws every lane of an SIR solution on a canvas: thin translucent lines per
// lane and compartment, the lane mean on top, axes with ticks and labels.

export const COLORS = { S: '#1f6fd1', I: '#d62828', R: '#2a9d4b' };
const FONT = '13px "Liberation Sans", Arial, Helvetica, sans-serif';
const MARGIN = { left: 64, right: 16, top: 16, bottom: 48 };

// 1, 2 or 5 times a power of ten, giving about `count` intervals over span.
function niceStep(span, count) {
  const raw = span / count, p = 10 ** Math.floor(Math.log10(raw)), f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/** Sizes the canvas's backing store to its CSS box times devicePixelRatio and
 * returns a context scaled to CSS pixels. */
function context(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || canvas.width, h = canvas.clientHeight || canvas.height;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, w, h };
}

function axes(ctx, box, tEnd) {
  const { x0, y0, x1, y1 } = box;
  const sx = (t) => x0 + (t / tEnd) * (x1 - x0), sy = (v) => y1 - v * (y1 - y0);
  ctx.font = FONT;
  ctx.lineWidth = 1;
  // Grid and tick labels.
  ctx.strokeStyle = '#e4e7eb';
  ctx.fillStyle = '#333';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let v = 0; v <= 1.0001; v += 0.2) {
    const y = Math.round(sy(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
    ctx.fillText(`${Math.round(v * 100)}%`, x0 - 8, y);
  }
  const step = niceStep(tEnd, 8);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (let t = 0; t <= tEnd + 1e-9; t += step) {
    const x = Math.round(sx(t)) + 0.5;
    ctx.beginPath(); ctx.moveTo(x, y0); ctx.lineTo(x, y1); ctx.stroke();
    ctx.fillText(String(Math.round(t)), x, y1 + 6);
  }
  // Axis lines and titles.
  ctx.strokeStyle = '#333';
  ctx.beginPath();
  ctx.moveTo(x0 + 0.5, y0); ctx.lineTo(x0 + 0.5, y1 + 0.5); ctx.lineTo(x1, y1 + 0.5);
  ctx.stroke();
  ctx.fillText('time (days)', (x0 + x1) / 2, y1 + 26);
  ctx.save();
  ctx.translate(16, (y0 + y1) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText('fraction of population', 0, 0);
  ctx.restore();
  return { sx, sy };
}

function legend(ctx, box, lanes) {
  ctx.font = FONT;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const items = [['S', 'susceptible'], ['I', 'infected'], ['R', 'recovered']];
  const x = box.x1 - 150;
  let y = box.y0 + 14;
  ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
  ctx.fillRect(x - 10, box.y0 + 2, 150, 24 * items.length + 24);
  for (const [key, label] of items) {
    ctx.strokeStyle = COLORS[key];
    ctx.lineWidth = 3;
    ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x + 22, y); ctx.stroke();
    ctx.fillStyle = '#222';
    ctx.fillText(`${key}: ${label}`, x + 30, y);
    y += 24;
  }
  ctx.fillStyle = '#555';
  ctx.fillText(`${lanes} lanes, bold = mean`, x, y);
}

/** Plots ys [3, nt, nb] (column-major Float64Array) at times 0..nt-1. */
export function plotLanes(canvas, ys, shape) {
  const [n, nt, nb] = shape;
  const { ctx, w, h } = context(canvas);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, h);
  const box = { x0: MARGIN.left, y0: MARGIN.top, x1: w - MARGIN.right, y1: h - MARGIN.bottom };
  const tEnd = nt - 1;
  const { sx, sy } = axes(ctx, box, tEnd);
  ctx.save();
  ctx.beginPath();
  ctx.rect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0);
  ctx.clip();
  ctx.lineJoin = 'round';
  const alpha = Math.max(0.04, Math.min(0.35, 12 / nb));
  const mean = new Float64Array(nt);
  ['S', 'I', 'R'].forEach((key, i) => {
    ctx.strokeStyle = COLORS[key];
    ctx.globalAlpha = alpha;
    ctx.lineWidth = 1;
    mean.fill(0);
    const counts = new Float64Array(nt);
    for (let b = 0; b < nb; b++) {
      ctx.beginPath();
      let pen = false;
      for (let j = 0; j < nt; j++) {
        const v = ys[i + n * (j + nt * b)];
        if (!Number.isFinite(v)) { pen = false; continue; }
        mean[j] += v; counts[j]++;
        if (pen) ctx.lineTo(sx(j), sy(v)); else ctx.moveTo(sx(j), sy(v));
        pen = true;
      }
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
    ctx.lineWidth = 2.5;
    ctx.beginPath();
    for (let j = 0; j < nt; j++) {
      const v = mean[j] / counts[j];
      if (j === 0) ctx.moveTo(sx(j), sy(v)); else ctx.lineTo(sx(j), sy(v));
    }
    ctx.stroke();
  });
  ctx.restore();
  legend(ctx, box, nb);
}
