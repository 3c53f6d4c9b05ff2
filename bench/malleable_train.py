"""One CPU training for bench/malleable.sh: a small MLP trained for STEPS steps
with Debian's PyTorch (/usr/bin/python3). MODE=static: torch threads fixed at
THREADS (the whole node: oversubscribed beside the others); MODE=malleable:
threads follow rota's allotment (rota.malleable, ROTA_RESOURCES_FILE + signal).
Writes {"name", "samples", "start", "end", "changes"} to RESULT_DIR/NAME.json."""

import json
import os
import sys
import time

import torch

mode = os.environ.get("MODE", "static")
steps = int(os.environ["STEPS"])
batch = int(os.environ.get("BATCH", "256"))
changes = 0
if mode == "malleable":
    sys.path.insert(0, os.environ["ROTA_PY"])
    from rota import malleable
    follower = malleable.follow(malleable.torch_hook(torch))
else:
    follower = None
    torch.set_num_threads(int(os.environ["THREADS"]))

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                            torch.nn.ReLU(), torch.nn.Linear(1024, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(batch, 512)
y = torch.randint(0, 10, (batch,))
loss_fn = torch.nn.CrossEntropyLoss()
start = time.time()
for _ in range(steps):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
end = time.time()
result = {"name": os.environ["NAME"], "samples": steps * batch, "start": start, "end": end,
          "changes": follower.changes if follower else 0, "threads_at_end": torch.get_num_threads()}
with open(os.path.join(os.environ["RESULT_DIR"], os.environ["NAME"] + ".json"), "w") as f:
    json.dump(result, f)
print(json.dumps(result), flush=True)
