# Sourced by run.sh and analyses.sh: the one pretraining step both use.
# Needs $out, $epochs, $task, $bin, $data and the arrays taskf and trainf.

ckpt() { # ELBO -> checkpoint path
  # Runs made before run.sh took a task named their checkpoints gvae-*.
  if [ -e "$out/gvae-$1.last.json" ]; then echo "$out/gvae-$1.pt"; else echo "$out/vae-$1.pt"; fi
}

pretrain() { # ELBO -> checkpoint path; resumes, and does nothing when done
  local ckpt resume=()
  ckpt=$(ckpt "$1")
  [ -f "${ckpt%.pt}.last.json" ] && resume=(--resume)
  if ! "$bin" train --task "$task" --data-dir "$data" --elbo "$1" --epochs "$epochs" --threads 1 --seed 0 \
    "${taskf[@]}" "${trainf[@]}" --out "$ckpt" "${resume[@]}" >> "$out/pretrain-$1.log" 2>&1; then
    echo "pretraining $1: FAILED, see $out/pretrain-$1.log" >&2
    return 1
  fi
  echo "pretraining $1: $(grep -E '^(seconds_per_epoch|val_reconstruction_greedy|prior_validity)' "$out/pretrain-$1.log" | tr '\n' ' ')" >&2
  echo "$ckpt"
}
