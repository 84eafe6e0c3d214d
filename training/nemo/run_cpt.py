"""Continued pretraining on the cluster (Megatron-Bridge) or anywhere (hf engine): a thin Hydra app.

    python training/nemo/run_cpt.py recipe=cpt_patok dry_run=true                 # resolve and print the plan
    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=prepare        # import + verify weights (1 GPU)
    torchrun --nproc-per-node 8 training/nemo/run_cpt.py recipe=cpt_patok          # train (resumes if possible)
    python training/nemo/run_cpt.py recipe=demo_base data.root=...                 # hf engine on CPU

Config: src/morphcpt/conf/train.yaml + recipe/ + model/ (schema morphcpt.plan.schema.CPTPlan); library code:
morphcpt.train. The PBS job (job_templates/run_cpt.pbs) runs the two cluster stages inside enroot.
"""

from morphcpt.train import main

if __name__ == "__main__":
    main()
