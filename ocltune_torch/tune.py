"""``python -m ocltune_torch.tune --model torchvision:resnet18 --input 2,3,64,64 --budget 5m [--eval]``:
ocltune_torch.tune from the command line (tune_model.main).

Only for ``-m``: ``import ocltune_torch`` exports the function ``ocltune_torch.tune`` (tune_model.py)
and never imports this module, so ``-m`` runs it without Python's warning about a module the package
already imported; importing it would put the module in the function's place on the package.
"""

import sys

from ocltune_torch.tune_model import main

if __name__ == "__main__":
    sys.exit(main())
