import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectBoilerplate, stripBoilerplateLines } from '../../processors/intake/detect-boilerplate.js';

const ARTICLE = [
  'The city council voted on Tuesday to extend the tram line to the eastern suburbs, ending a debate that had lasted almost a decade.',
  'The extension will add six stops and about four kilometres of track, and construction is expected to begin next spring, officials said.',
  'Residents of the eastern districts have long complained that bus connections to the centre are slow and unreliable, especially in winter.',
  'Opponents on the council argued that the money would be better spent on repairing existing roads, but the motion passed by 31 votes to 12.',
  'The transport department said it would publish a detailed timetable for the works, including planned road closures, before the end of the year.',
].join('\n\n');

describe('detectBoilerplate', () => {
  it('recognises a video-ad feedback form', () => {
    const text =
      'Ad feedback\n\n1. How relevant is this ad to you?\n\nAudio on ad was too loud. Video player was slow to load the clip. Something else';
    expect(detectBoilerplate('Tram line extension approved', text)?.kind).toBe('ad_prompt');
  });

  it('recognises a newsletter sign-up notice with its data-protection small print', () => {
    const text = [
      'Would you like to receive our Morning Brief newsletter?',
      'The Morning Brief newsletter gives you the top stories of the day before breakfast.',
      'We will use the information you have shared to send you the newsletter. You agree to the processing, storage, sharing and use of this information as set out in our privacy notice.',
      'Tick this box to object to the use of your data for marketing.',
      'Our brands are listed on the about page.',
    ].join('\n\n');
    const verdict = detectBoilerplate('Council approves tram line', text);
    expect(verdict?.kind).toBe('newsletter_signup');
    expect(verdict?.evidence.toLowerCase()).toContain('newsletter');
  });

  it('recognises a consent wall', () => {
    const text =
      'We value your privacy\n\nWe and our partners use cookies to store and access information on your device for ads and measurement.\n\nAccept all cookies\n\nManage your consent preferences';
    expect(detectBoilerplate('', text)?.kind).toBe('consent_wall');
  });

  it('recognises a paywall', () => {
    const text =
      'This article is available to subscribers only.\n\nSubscribe now to continue reading.\n\nAlready a subscriber? Log in here.';
    expect(detectBoilerplate('Tram line extension approved', text)?.kind).toBe('paywall');
  });

  it('recognises error pages by text and by title', () => {
    expect(
      detectBoilerplate('Oops', 'Sorry, the page you are looking for does not exist. Try the home page.')?.kind,
    ).toBe('error_page');
    expect(detectBoilerplate('Welcome', 'Please enable JavaScript to view this site.')?.kind).toBe('error_page');
    const byTitle = detectBoilerplate('404 - Page not found', 'Try searching for what you need.');
    expect(byTitle).toEqual({ kind: 'error_page', evidence: '404 - Page not found' });
  });

  it('does not flag a real article that ends with a sign-up line', () => {
    const text = `${ARTICLE}\n\nSign up for our free City Hall newsletter to get council news every week.`;
    expect(detectBoilerplate('Council approves tram line', text)).toBeUndefined();
  });

  it('does not flag a short real article with one promotional line', () => {
    const text = `${ARTICLE.split('\n\n').slice(0, 2).join('\n\n')}\n\nGet the Daily Five delivered to your inbox.`;
    expect(detectBoilerplate('Council approves tram line', text)).toBeUndefined();
  });

  it('does not flag a long article about cookies and consent', () => {
    const text = [
      'Regulators said on Monday that websites must make rejecting tracking as easy as accepting it, after a two-year review of consent banners across the bloc.',
      'The review found that many sites hid the option to refuse behind several menus, while a single button was enough to accept all cookies and consent to profiling.',
      ARTICLE,
    ].join('\n\n');
    expect(detectBoilerplate('Regulators tighten cookie banner rules', text)).toBeUndefined();
  });

  it('finds nothing in empty text', () => {
    expect(detectBoilerplate('A title', '')).toBeUndefined();
  });
});

describe('stripBoilerplateLines', () => {
  it('removes sign-up, subscription and furniture lines and keeps the article', () => {
    const text = [
      'Get the Daily Five in your inbox. If your morning starts with headlines, sign up here for the Daily Five newsletter.',
      ARTICLE,
      'Read more',
      'Support local journalism. Subscribe to the Gazette today.',
      'Sign up for our free City Hall newsletter to get council news every week.',
    ].join('\n\n');
    expect(stripBoilerplateLines(text)).toBe(ARTICLE);
  });

  it('keeps quoted speech and long paragraphs that happen to contain a phrase', () => {
    const quote = '“We and our partners will not abandon this project,” the mayor told reporters after the vote.';
    const long = `${'The budget debate continued for hours. '.repeat(20)}Members were told to sign up for the council newsletter.`;
    const text = `${quote}\n\n${long}`;
    expect(stripBoilerplateLines(text)).toBe(text);
  });

  it('only ever removes whole lines and is idempotent', () => {
    const line = fc.oneof(
      fc.string({ maxLength: 80 }).map((s) => s.replace(/\n/g, ' ')),
      fc.constantFrom('Read more', 'Sign up for our newsletter.', 'Advertisement', 'Accept all cookies', ''),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), (lines) => {
        const text = lines.join('\n');
        const stripped = stripBoilerplateLines(text);
        const original = new Set(lines.map((l) => l.trim()));
        for (const kept of stripped.split('\n')) {
          if (kept.trim() !== '') expect(original.has(kept.trim())).toBe(true);
        }
        expect(stripped).not.toMatch(/^(?:Read more|Advertisement|Accept all cookies)$/m);
        expect(stripBoilerplateLines(stripped)).toBe(stripped);
      }),
    );
  });
});
