"""``python -m ocltune_torch.tune --model torchvision:resnet18 --input 2,3,64,64 --budget 5m [--eval]``:
ocltune_torch.tune from the command line (tune_model.main). A directory of its own rather than a
tune.py, so that ``import ocltune_torch`` (which exports the function ``ocltune_torch.tune``) does not
import the module ``-m`` runs, which Python warns about."""

import sys

from ocltune_torch.tune_model import main

sys.exit(main())
