"""Writes the Fashion-MNIST images as idx2 files of flat 784-pixel rows.

usage: flat_idx.py SRC_DIR OUT_DIR

OUT_DIR/train-images-idx2-ubyte and t10k-images-idx2-ubyte hold the same
bytes as SRC_DIR's idx3 image files with dims [count, 784]; the label files
are linked. A program whose field is `images : tensor<784xf32>` binds them
by name with `--data OUT_DIR` (docs/data-binding.md).
"""
import gzip, os, struct, sys

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
for split in ('train', 't10k'):
    with gzip.open(os.path.join(src, split + '-images-idx3-ubyte.gz'), 'rb') as f:
        data = f.read()
    magic, count, rows, cols = struct.unpack('>IIII', data[:16])
    assert magic == 0x803, hex(magic)
    with open(os.path.join(out, split + '-images-idx2-ubyte'), 'wb') as f:
        f.write(struct.pack('>III', 0x802, count, rows * cols))
        f.write(data[16:])
    name = split + '-labels-idx1-ubyte.gz'
    dst = os.path.join(out, name)
    if not os.path.exists(dst):
        os.symlink(os.path.join(src, name), dst)
