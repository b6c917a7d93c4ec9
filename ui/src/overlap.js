// Where attempts on one target ran at once: the target page's red bands.
// Pure (no DOM, no store), so the browser-less test checks it directly.

// `ivs`: [{ job, attempt, from, to }] in ms. Every pair that shares time gives
// one band over the shared part; touching ends (one ends as the other starts)
// do not overlap.
export function overlaps(ivs) {
  const bands = [];
  for (let i = 0; i < ivs.length; i++) for (let k = i + 1; k < ivs.length; k++) {
    const a = ivs[i], b = ivs[k];
    const from = Math.max(a.from, b.from), to = Math.min(a.to, b.to);
    if (to > from) bands.push({ from, to, label: `overlap: job ${a.job} attempt ${a.attempt} and job ${b.job} attempt ${b.attempt} ran at once from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}` });
  }
  return bands;
}
