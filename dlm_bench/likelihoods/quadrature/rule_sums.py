"""The weighted sums over a rule's nodes as autograd Functions with an analytic backward (the value and d/dmu,
d/dvar, d/dlog_p from the same nodes, no graph over them): log sum_k (log E_q[p] by the panel and the
Laplace-Hermite rules) and sum_k (E_q[log p] by the panel rule).
"""

from __future__ import annotations

import torch

from .common import LOG_2PI


class _RuleLogSumExp(torch.autograd.Function):
    """log sum_k exp(log_w_k + log N(f_k|mu,var) + log_p_k) per point, with the analytic backward
    d/dmu = sum_k s_k (f_k - mu)/var, d/dvar = sum_k s_k ((f_k - mu)^2/var^2 - 1/var)/2, d/dlog_p_k = s_k
    (s the softmax of the summands): no autograd graph over the nodes except what log_p itself carries."""

    @staticmethod
    def forward(ctx, mu, var, log_p, f, log_w):
        z = f - mu.unsqueeze(-1)
        a = z * z
        a.mul_((-0.5 / var).unsqueeze(-1)).add_(log_w).add_(log_p).add_((-0.5 * (LOG_2PI + torch.log(var))).unsqueeze(-1))
        out = torch.logsumexp(a, -1)
        soft = a.sub_(out.unsqueeze(-1)).exp_()  # 0 on zero-width panels (log_w = -inf)
        ctx.save_for_backward(soft, z, var)
        return out

    @staticmethod
    def backward(ctx, g):
        soft, z, var = ctx.saved_tensors
        sz = soft * z
        d_mu = sz.sum(-1) / var
        d_var = 0.5 * ((sz * z).sum(-1) / (var * var) - soft.sum(-1) / var)
        d_logp = soft * g.unsqueeze(-1) if ctx.needs_input_grad[2] else None
        return g * d_mu, g * d_var, d_logp, None, None


class _RuleSum(torch.autograd.Function):
    """sum_k exp(log_w_k + log N(f_k|mu,var)) log_p_k per point, analytic backward (as _RuleLogSumExp)."""

    @staticmethod
    def forward(ctx, mu, var, log_p, f, log_w):
        z = f - mu.unsqueeze(-1)
        v = var.unsqueeze(-1)
        pw = torch.exp(log_w - 0.5 * (LOG_2PI + torch.log(v) + z * z / v))
        lp = torch.where(pw > 0, pw * log_p, torch.zeros_like(log_p))
        ctx.save_for_backward(pw, lp, z, var)
        return lp.sum(-1)

    @staticmethod
    def backward(ctx, g):
        pw, lp, z, var = ctx.saved_tensors
        d_mu = (lp * z).sum(-1) / var
        d_var = 0.5 * ((lp * z * z).sum(-1) / (var * var) - lp.sum(-1) / var)
        d_logp = pw * g.unsqueeze(-1) if ctx.needs_input_grad[2] else None
        return g * d_mu, g * d_var, d_logp, None, None
