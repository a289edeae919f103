// Package dashboard is the read-only web dashboard of `tlbo-native serve`:
// it serves every run directory (a directory with config.json and
// journal.jsonl, or a committed run's journal.jsonl.gz) under one root.
//
// The index lists the runs; a run page shows one run or a selection of
// runs: the best-so-far curve against distinct evaluations (the runs of a
// setting that differ only in the seed as a mean with a band of one
// standard deviation, grouped as `plot` groups them: bo.GroupCurves), the
// progress and an estimate of the time left from the journal's timing, the
// best objects (molecules drawn by RDKit through internal/chem, topology
// designs as images, other objects as text), the GP's fit per round from
// the journal's gp records, the trust region's length, and a 2-D PCA map of
// the evaluated latent points coloured by score. Of a manual run
// (--objective manual: ask and tell) it also lists the objects awaiting
// their results, with their age and predicted score, as manual.Status
// reads them for `tlbo-native status` (the same reader, not a second one);
// such a run is listed from its set-up on, before it has a configuration
// or a journal.
//
// The page polls a JSON endpoint every few seconds and redraws, so a run
// being written is followed without a reload. The journal is the live
// source: a torn last line (one being written) is skipped; results.npz,
// which the loop rewrites atomically, gives only the labelled start's best.
//
// Charts are hand-written SVG, drawn in the browser by the embedded
// assets/app.js from the JSON: the dashboard needs four kinds of plot
// (lines with bands, scatter), which a few hundred lines draw, and so it
// ships no third-party code, no licence to carry and nothing fetched from a
// network at run time. The assets are embedded in the binary (embed.FS).
//
// Safety: the server binds 127.0.0.1 unless told otherwise; it reads only
// the files it names itself (config.json, the journal, results.npz, and of
// a manual run what status reads: flags.json, manual.json, told.json,
// initial.npz) inside
// run directories it found by walking the root without following symlinks,
// and refuses a run name that is absolute or holds "..", and any file whose
// symlinks resolve outside the root. It opens no file for writing.
package dashboard
