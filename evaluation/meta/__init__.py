"""Meta-evaluation of diversity metrics (definitions in docs/metrics.md#agreement-with-users and docs/metrics.md#meta-evaluation; commands in ``docs/meta.md``).

Agreement with user preferences (tau, tau_b, MUP, MUP_b), user-preference summaries,
discriminative power (paired bootstrap, randomised Tukey HSD), intuitiveness, system-ranking
correlation (tau, tau_ap), metric unanimity, document selection sensitivity, leave-one-out
reusability, topic-set reduction, simplified collections and the planted-truth simulator.
Command line: ``python -m evaluation meta <command>`` (:mod:`evaluation.meta.cli`).
"""

from evaluation.meta._matrix import ScoreCube, score_cube
from evaluation.meta.agreement import AgreementResult, agreement, agreement_with_users
from evaluation.meta.correlation import rank_correlation, rankcorr_table, symmetric_tau_ap, tau_ap
from evaluation.meta.dss import document_selection_sensitivity
from evaluation.meta.intuitiveness import concordance_test
from evaluation.meta.levels import preference_items
from evaluation.meta.reduction import topic_set_reduction
from evaluation.meta.reusability import leave_one_out
from evaluation.meta.significance import DiscriminativePower, bootstrap_asl, discriminative_power, tukey_asl
from evaluation.meta.simplified import simplified_comparison
from evaluation.meta.simulate import UserModel, planted_truth
from evaluation.meta.unanimity import metric_unanimity
from evaluation.meta.userprefs import preference_summary

__all__ = [
    "AgreementResult",
    "DiscriminativePower",
    "ScoreCube",
    "UserModel",
    "agreement",
    "agreement_with_users",
    "bootstrap_asl",
    "concordance_test",
    "discriminative_power",
    "document_selection_sensitivity",
    "leave_one_out",
    "metric_unanimity",
    "planted_truth",
    "preference_items",
    "preference_summary",
    "rank_correlation",
    "rankcorr_table",
    "score_cube",
    "simplified_comparison",
    "symmetric_tau_ap",
    "tau_ap",
    "topic_set_reduction",
    "tukey_asl",
]
