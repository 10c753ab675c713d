#!/usr/bin/env sh
# Re-run the real-data experiments on scikit-learn's digits (NumPy LR through simulate; a few minutes on 2 cores).
# Outputs (JSON, Markdown, PNG) go to experiments/real/results/. See experiments/real/README.md for the numbers.
set -e
OUT=${OUT:-experiments/real/results}
for exp in table2 figure5 wallclock table3; do
  python -m afltheory.cli real "$exp" --out "$OUT" | tee "$OUT/$exp.txt"
done
# Torch backend, the Table 1 CNN adapted to 8x8 inputs (slower; fewer seeds/rounds):
python -m afltheory.cli real table2 --backend torch --model cnn --ps 1 10 --seeds 2 --rounds 80 --K 5 \
  --eta-L 0.3 --batch 32 --eval-every 10 --out "$OUT/cnn" | tee "$OUT/cnn/table2.txt"
