// Metered-dimension settings (spec 2.9, 4.1 limits) and consumption against them (self-service summary).
// A subscription is on the plan named in subscription_plans, else on the plan with key 'default'; a
// subscription_limit_overrides row replaces a limit's value for that subscription, and the plan's value
// stays the entry's defaultValue.
import type { Queryable } from '../db.ts';

export const UNLIMITED = -1;

export interface LimitEntry {
  id: string;
  key: string;
  value: string;
  defaultValue: string;
  meta: {
    application: string;
    scope: { id?: string; name: string; priority?: number };
    category: { id?: string; name: string; description: string; sortOrder?: number };
    subCategory: { id?: string; name: string; description: string; sortOrder?: number };
    group: { key: string; name: string };
  };
}

export interface Setting {
  name: string;
  allocatedResources: string;
  displayName: string;
  groups: string;
  pricePerUnit?: number;
  subscriptionLimits: { monthly: LimitEntry[]; yearly: LimitEntry[] };
  userLimits: { monthly: LimitEntry[]; yearly: LimitEntry[] };
}

export interface LimitFilter {
  /** Canonical scope name (Global, User, Subscription, Account), or all scopes. */
  scope?: string;
  /** Canonical application name, or all applications. */
  application?: string;
}

interface DimensionRow {
  name: string;
  display_name: string;
  groups: string[];
  price_per_unit: number | null;
}

interface LimitRow {
  id: string;
  dimension: string;
  audience: 'subscription' | 'user';
  period: 'monthly' | 'yearly';
  key: string;
  value: string;
  default_value: string;
  application: string;
  scope_id: string | null;
  scope_name: string;
  scope_priority: number;
  category_id: string | null;
  category_name: string;
  category_description: string;
  category_sort_order: number;
  sub_category_id: string | null;
  sub_category_name: string;
  sub_category_description: string;
  sub_category_sort_order: number;
  group_key: string;
  group_name: string;
}

const PLAN_OF = `coalesce((SELECT plan_id FROM subscription_plans WHERE subscription_id = $1), (SELECT id FROM plans WHERE key = 'default'))`;

/** "1,000 per month", "12,000 per year" or "Unlimited": display text, deliberately not a number. */
export function allocatedText(monthly: number | undefined, yearly: number | undefined): string {
  const fmt = (n: number) => new Intl.NumberFormat('en-US').format(n);
  if (monthly !== undefined && monthly !== UNLIMITED) return `${fmt(monthly)} per month`;
  if (yearly !== undefined && yearly !== UNLIMITED) return `${fmt(yearly)} per year`;
  return 'Unlimited';
}

/** Omits ids that are empty and orders/priorities that are 0, as 2.9 says. */
function toEntry(r: LimitRow): LimitEntry {
  const scope: LimitEntry['meta']['scope'] = { name: r.scope_name };
  if (r.scope_id) scope.id = r.scope_id;
  if (r.scope_priority) scope.priority = r.scope_priority;
  const cat = (id: string | null, name: string, description: string, sortOrder: number) => {
    const c: LimitEntry['meta']['category'] = { name, description };
    if (id) c.id = id;
    if (sortOrder) c.sortOrder = sortOrder;
    return c;
  };
  return {
    id: r.id,
    key: r.key,
    value: r.value,
    defaultValue: r.default_value,
    meta: {
      application: r.application,
      scope,
      category: cat(r.category_id, r.category_name, r.category_description, r.category_sort_order),
      subCategory: cat(r.sub_category_id, r.sub_category_name, r.sub_category_description, r.sub_category_sort_order),
      group: { key: r.group_key, name: r.group_name },
    },
  };
}

async function limitRows(db: Queryable, subscriptionId: string): Promise<{ dims: DimensionRow[]; limits: LimitRow[] }> {
  const [dims, limits] = await Promise.all([
    db.query<DimensionRow>(
      `SELECT name, display_name, groups, price_per_unit FROM plan_dimensions WHERE plan_id = ${PLAN_OF} ORDER BY sort_order, name`,
      [subscriptionId],
    ),
    db.query<LimitRow>(
      `SELECT l.id, l.dimension, l.audience, l.period, l.key, coalesce(o.value, l.value)::text AS value, l.value::text AS default_value,
              l.application, l.scope_id, l.scope_name, l.scope_priority, l.category_id, l.category_name, l.category_description,
              l.category_sort_order, l.sub_category_id, l.sub_category_name, l.sub_category_description, l.sub_category_sort_order,
              l.group_key, l.group_name
       FROM plan_limits l LEFT JOIN subscription_limit_overrides o ON o.limit_id = l.id AND o.subscription_id = $1
       WHERE l.plan_id = ${PLAN_OF} ORDER BY l.scope_priority DESC, l.key, l.id`,
      [subscriptionId],
    ),
  ]);
  return { dims: dims.rows, limits: limits.rows };
}

const sameText = (a: string, b: string | undefined) => b === undefined || a.toLowerCase() === b.toLowerCase();

/**
 * The settings of the subscription's plan. The filter selects limit entries; every dimension is listed
 * whatever the filter, and allocatedResources always reads the subscription's own monthly/yearly limit.
 */
export async function getSettings(db: Queryable, subscriptionId: string, filter: LimitFilter): Promise<Setting[]> {
  const { dims, limits } = await limitRows(db, subscriptionId);
  return dims.map((d) => {
    const mine = limits.filter((l) => l.dimension === d.name);
    const subValue = (period: string) => {
      const l = mine.find((x) => x.audience === 'subscription' && x.period === period);
      return l ? Number(l.value) : undefined;
    };
    const selected = mine.filter((l) => sameText(l.scope_name, filter.scope) && sameText(l.application, filter.application));
    const pick = (audience: string, period: string) => selected.filter((l) => l.audience === audience && l.period === period).map(toEntry);
    const s: Setting = {
      name: d.name,
      allocatedResources: allocatedText(subValue('monthly'), subValue('yearly')),
      displayName: d.display_name,
      groups: d.groups.join(','),
      subscriptionLimits: { monthly: pick('subscription', 'monthly'), yearly: pick('subscription', 'yearly') },
      userLimits: { monthly: pick('user', 'monthly'), yearly: pick('user', 'yearly') },
    };
    if (d.price_per_unit !== null && d.price_per_unit !== undefined) s.pricePerUnit = Number(d.price_per_unit);
    return s;
  });
}

export interface Usage {
  used: number;
  userUsed: number;
  limit: number | null;
  remaining: number | null;
  userLimit: number | null;
  userRemaining: number | null;
}

export interface SelfService {
  month: { start: string; end: string };
  year: { start: string; end: string };
  dimensions: { name: string; displayName: string; monthly: Usage; yearly: Usage }[];
}

/** Consumption of the current UTC calendar month and year, for the subscription and for the caller, against the limits. */
export async function getSelfService(db: Queryable, subscriptionId: string, userId: string, now = new Date()): Promise<SelfService> {
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const yearStart = new Date(Date.UTC(now.getUTCFullYear(), 0, 1));
  const yearEnd = new Date(Date.UTC(now.getUTCFullYear() + 1, 0, 1));
  const [{ dims, limits }, used] = await Promise.all([
    limitRows(db, subscriptionId),
    db.query<{ dimension: string; m: string; y: string; um: string; uy: string }>(
      `SELECT dimension,
              coalesce(sum(value) FILTER (WHERE created_date >= $2 AND created_date < $3), 0)::text AS m,
              coalesce(sum(value), 0)::text AS y,
              coalesce(sum(value) FILTER (WHERE created_date >= $2 AND created_date < $3 AND user_id = $6), 0)::text AS um,
              coalesce(sum(value) FILTER (WHERE user_id = $6), 0)::text AS uy
       FROM consumption WHERE subscription_id = $1 AND created_date >= $4 AND created_date < $5 GROUP BY dimension`,
      [subscriptionId, monthStart, monthEnd, yearStart, yearEnd, userId],
    ),
  ]);
  const usage = (dimension: string, period: 'monthly' | 'yearly'): Usage => {
    const u = used.rows.find((r) => r.dimension === dimension);
    const total = Number(period === 'monthly' ? (u?.m ?? 0) : (u?.y ?? 0));
    const mine = Number(period === 'monthly' ? (u?.um ?? 0) : (u?.uy ?? 0));
    const limitOf = (audience: string) => {
      const l = limits.find((x) => x.dimension === dimension && x.audience === audience && x.period === period);
      const n = l ? Number(l.value) : UNLIMITED;
      return n === UNLIMITED ? null : n;
    };
    const limit = limitOf('subscription');
    const userLimit = limitOf('user');
    return {
      used: total,
      userUsed: mine,
      limit,
      remaining: limit === null ? null : Math.max(0, limit - total),
      userLimit,
      userRemaining: userLimit === null ? null : Math.max(0, userLimit - mine),
    };
  };
  return {
    month: { start: monthStart.toISOString(), end: monthEnd.toISOString() },
    year: { start: yearStart.toISOString(), end: yearEnd.toISOString() },
    dimensions: dims.map((d) => ({
      name: d.name,
      displayName: d.display_name,
      monthly: usage(d.name, 'monthly'),
      yearly: usage(d.name, 'yearly'),
    })),
  };
}
