#!/usr/bin/env python3
"""Trains a small model with accelerate_train_mode: low precision first, then the original.

Ascend's behaviour end to end (Ascend's accelerate_train_mode with TellMeStepOrLossHook):
the first part of training runs in low precision, the rest in the original float32, and
npucc.Schedule decides at every step which one runs. The script trains the same model
twice from the same seed on the CPU with Debian's python3-torch:

1. in float32 throughout (the reference);
2. with npucc.Schedule(mode) deciding each step: in the low phase
   - fast1 (bfloat16): under torch.autocast("cpu", dtype=torch.bfloat16), PyTorch's mixed
     precision: matrix products in bfloat16, master weights and reductions in float32.
     bfloat16 has float32's range, so no loss scaling is needed;
   - fast (float16): the CPU has no float16 arithmetic in this PyTorch (CPU autocast takes
     bfloat16 only, and float16 matrix products are not implemented for the CPU), so the
     low phase emulates it: each Linear layer's input, weight and bias are rounded to
     float16 and multiplied in float32, and the gradients flowing back through those
     roundings are float16 too. Small gradients underflow as they would on an NPU, so a
     dynamic loss scaler is used (DynamicLossScaler: PyTorch GradScaler's rule).
   After the switch every step runs in float32, as the reference does.

The task is deterministic and synthetic: a student MLP learns a fixed random teacher MLP
from noisy samples (mean squared error; the noise sets a floor of 0.0025). The final loss
of each run is the float32 loss of its trained model on a held-out set.

The last line printed is one JSON object:
    {"steps", "low_steps", "switch_step", "loss_float32", "loss_accelerated",
     "seconds_float32", "seconds_accelerated"}
switch_step is the first step that ran in high precision (null: none did). With
fast1|step|0.9, 90% of the steps run low and the final losses agree within a few percent.

    python3 examples/torch_train.py                       # fast1|step|0.9, 2000 steps
    python3 examples/torch_train.py --mode 'fast|step|0.8'
    python3 examples/torch_train.py --loss                # fast1|loss|1.05
    python3 examples/torch_train.py --steps 300           # short (CI)
    python3 examples/torch_train.py --compile out/        # also compile the model's ONNX pair

npucc is imported from PYTHONPATH (PREFIX/lib/python3/dist-packages after `cmake --install
build --prefix PREFIX`, or build/python in the build tree).
"""

import argparse
import json
import math
import pathlib
import sys
import time

import torch
import torch.nn.functional as F

import npucc

INPUTS = 16
HIDDEN = 64
NOISE = 0.05  # the noise floor of the mean squared error is NOISE ** 2
TRAIN_SAMPLES = 4096
EVAL_SAMPLES = 1024


class DynamicLossScaler:
    """Loss scaling for float16 training, by the rule of PyTorch's GradScaler (its defaults).

    torch.cuda.amp.GradScaler runs on CUDA only, so the CPU example has its own:
    - the loss is multiplied by the scale before backward(), so small gradients do not
      underflow float16; the gradients are divided by it before the optimizer step;
    - the scale starts at 2**16 (init_scale=65536.0);
    - an overflow (an inf or NaN gradient) skips the step and halves the scale
      (backoff_factor=0.5);
    - after 2000 steps in a row without overflow the scale doubles (growth_factor=2.0,
      growth_interval=2000).
    """

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale = init_scale
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.skipped = 0
        self._good_steps = 0

    def step(self, loss, optimizer, parameters):
        """backward() of the scaled loss, then the optimizer step unless a gradient overflowed."""
        (loss * self.scale).backward()
        grads = [p.grad for p in parameters if p.grad is not None]
        if not all(torch.isfinite(g).all() for g in grads):
            self.scale *= self.backoff_factor
            self._good_steps = 0
            self.skipped += 1
            return False
        for g in grads:
            g.div_(self.scale)
        optimizer.step()
        self._good_steps += 1
        if self._good_steps == self.growth_interval:
            self.scale *= self.growth_factor
            self._good_steps = 0
        return True


class Student(torch.nn.Module):
    """An MLP whose forward pass can round its Linear layers to float16 (the fast emulation)."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            [torch.nn.Linear(INPUTS, HIDDEN), torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.Linear(HIDDEN, 1)]
        )

    def forward(self, x, round_to=None):
        for index, layer in enumerate(self.layers):
            if round_to is None:
                x = layer(x)
            else:
                weight, bias = rounded(layer.weight, round_to), rounded(layer.bias, round_to)
                x = F.linear(rounded(x, round_to), weight, bias)
            if index < len(self.layers) - 1:
                x = torch.tanh(x)
        return x


def rounded(tensor, dtype):
    """The tensor rounded to dtype and back: differentiable, so gradients are rounded too."""
    return tensor.to(dtype).float()


def make_task(seed):
    """The teacher's noisy training set and a clean held-out set, from `seed`."""
    generator = torch.Generator().manual_seed(seed)
    teacher = [torch.randn(INPUTS, HIDDEN, generator=generator) / math.sqrt(INPUTS),
               torch.randn(HIDDEN, 1, generator=generator) / math.sqrt(HIDDEN)]

    def target(x):
        return torch.tanh(x @ teacher[0]) @ teacher[1]

    train_x = torch.randn(TRAIN_SAMPLES, INPUTS, generator=generator)
    train_y = target(train_x) + NOISE * torch.randn(TRAIN_SAMPLES, 1, generator=generator)
    eval_x = torch.randn(EVAL_SAMPLES, INPUTS, generator=generator)
    eval_y = target(eval_x) + NOISE * torch.randn(EVAL_SAMPLES, 1, generator=generator)
    return train_x, train_y, eval_x, eval_y


class LowPhase:
    """How one training step runs in the low-precision phase of a mode."""

    def __init__(self, mode):
        self.mode = mode
        self.scaler = DynamicLossScaler() if mode.type == "fast" else None

    def loss(self, model, x, y):
        if self.mode.type == "fast1":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                prediction = model(x)
            return F.mse_loss(prediction.float(), y)  # the loss itself in float32
        return F.mse_loss(model(x, round_to=torch.float16), y)

    def backward_and_step(self, loss, optimizer, model):
        if self.scaler is None:
            loss.backward()
            optimizer.step()
        else:
            self.scaler.step(loss, optimizer, list(model.parameters()))


def train(task, args, schedule=None, final_loss=None):
    """One run: float32 throughout when schedule is None, else as the schedule decides.

    Returns (trained model, steps run low, first high step, the smoothed training loss)."""
    train_x, train_y, _, _ = task
    torch.manual_seed(args.seed)
    model = Student()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    decay = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    batches = torch.Generator().manual_seed(args.seed + 1)
    low = LowPhase(schedule.mode) if schedule is not None else None
    low_steps, switch_step, smoothed = 0, None, 0.0
    for step in range(args.steps):
        index = torch.randint(0, TRAIN_SAMPLES, (args.batch,), generator=batches)
        x, y = train_x[index], train_y[index]
        role = decide(schedule, step, args.steps, smoothed, final_loss)
        optimizer.zero_grad(set_to_none=True)
        if role == "low":
            low_steps += 1
            loss = low.loss(model, x, y)
            low.backward_and_step(loss, optimizer, model)
        else:
            if schedule is not None and switch_step is None:
                switch_step = step
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        decay.step()
        # The loss trigger reads a smoothed loss: one lucky batch must not end the low phase.
        smoothed = loss.item() if step == 0 else 0.95 * smoothed + 0.05 * loss.item()
    if low is not None and low.scaler is not None:
        print(f"  loss scale at the end 2^{int(math.log2(low.scaler.scale))}, "
              f"{low.scaler.skipped} step(s) skipped on overflow", file=sys.stderr)
    return model, low_steps, switch_step, smoothed


def decide(schedule, step, total_steps, smoothed, final_loss):
    """The graph this step runs: "high" without a schedule (the float32 run)."""
    if schedule is None:
        return npucc.GraphRole.HIGH
    if schedule.mode.trigger == "step":
        return schedule.report_step(step, total_steps)
    # The loss trigger: 0 until a loss exists ("not reported yet" never switches).
    return schedule.report_loss(smoothed if step > 0 else 0.0, final_loss)


def evaluate(model, task):
    _, _, eval_x, eval_y = task
    with torch.no_grad():
        return F.mse_loss(model(eval_x), eval_y).item()


def compile_model(model, folder, mode):
    """Exports the trained model to ONNX and compiles it into its pair of graphs."""
    folder.mkdir(parents=True, exist_ok=True)
    onnx_path = folder / "student.onnx"
    torch.onnx.export(model, (torch.zeros(1, INPUTS),), str(onnx_path), input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                      opset_version=13)
    result = npucc.compile(onnx_path, folder / "compiled", accelerate_train_mode=mode, no_cache=True)
    for role, path in result.graphs.items():
        print(f"  compiled {role}: {path} ({result.precisions[role]})", file=sys.stderr)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", help="accelerate_train_mode (default fast1|step|0.9; with --loss fast1|loss|1.05)")
    parser.add_argument("--loss", action="store_true", help="switch on the loss instead of the step")
    parser.add_argument("--final-loss", type=float,
                        help="the target loss of the loss trigger (default: the float32 run's final "
                             "smoothed training loss)")
    parser.add_argument("--steps", type=int, default=2000, help="training steps of each run (default 2000)")
    parser.add_argument("--batch", type=int, default=128, help="samples a step (default 128)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task, the weights and the batches")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: both runs alike on a busy machine)")
    parser.add_argument("--compile", type=pathlib.Path, metavar="DIR",
                        help="also export the trained model to DIR/student.onnx and compile it")
    args = parser.parse_args(argv)
    if args.mode is None:
        args.mode = "fast1|loss|1.05" if args.loss else "fast1|step|0.9"
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    return args


def main(argv):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        mode = npucc.parse_accelerate_train_mode(args.mode)
    except ValueError as error:
        print(f"torch_train.py: error: --mode: {error}", file=sys.stderr)
        return 2
    task = make_task(args.seed)
    print(f"npucc {npucc.__version__}, torch {torch.__version__}: {args.steps} steps, mode {mode}",
          file=sys.stderr)

    start = time.perf_counter()
    reference, _, _, reference_smoothed = train(task, args)
    seconds_float32 = time.perf_counter() - start
    loss_float32 = evaluate(reference, task)
    print(f"  float32: loss {loss_float32:.6f} in {seconds_float32:.2f} s", file=sys.stderr)

    final_loss = args.final_loss if args.final_loss is not None else reference_smoothed
    schedule = npucc.Schedule(mode)
    start = time.perf_counter()
    model, low_steps, switch_step, _ = train(task, args, schedule, final_loss)
    seconds_accelerated = time.perf_counter() - start
    loss_accelerated = evaluate(model, task)
    print(f"  {mode}: loss {loss_accelerated:.6f} in {seconds_accelerated:.2f} s, {low_steps} of "
          f"{args.steps} steps low, switched at {switch_step}", file=sys.stderr)
    if args.compile is not None:
        compile_model(model, args.compile, mode)

    print(json.dumps({
        "steps": args.steps,
        "low_steps": low_steps,
        "switch_step": switch_step,
        "loss_float32": loss_float32,
        "loss_accelerated": loss_accelerated,
        "seconds_float32": round(seconds_float32, 3),
        "seconds_accelerated": round(seconds_accelerated, 3),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
